package luaproc

// Runtime.Call: a process run on the calling goroutine from start to
// end. Its results and errors are Wait's; a Go command answered from
// another goroutine, a timer and messages bring it back to the caller;
// its context's end (waiting or spinning), Kill, Shutdown and MaxStep
// end it and Call returns; the counters stay exact.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	lua "github.com/luarun/luarun/lua"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callIn runs Call on a new goroutine; the channel gets its answer.
func callIn(rt *Runtime, ctx context.Context, s *Script, entry string, args ...any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := rt.Call(ctx, s, entry, args...)
		ch <- callResult{res, err}
	}()
	return ch
}

type callResult struct {
	res []any
	err error
}

// awaitCall is callIn's answer, failing the test if Call does not return.
func awaitCall(t *testing.T, ch <-chan callResult) ([]any, error) {
	t.Helper()
	select {
	case r := <-ch:
		return r.res, r.err
	case <-time.After(hungAfter):
		t.Fatal("Call did not return")
		return nil, nil
	}
}

// TestCallResultsAndErrors: Call returns the entry's results, a Lua
// error as a *ScriptError, a missing entry as an *EntryError, and a
// start it refuses (an argument with no Lua form) wrapped with the
// script's name.
func TestCallResultsAndErrors(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	s, err := rt.LoadString("calc.lua", `
function add(a, b) return a + b, "sum" end
function boom() error("no luck") end`)
	require.NoError(t, err)
	res, err := rt.Call(context.Background(), s, "add", 2, 3)
	require.NoError(t, err)
	assert.Equal(t, []any{int64(5), "sum"}, res)

	_, err = rt.Call(context.Background(), s, "boom")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "no luck")

	_, err = rt.Call(context.Background(), s, "nothing")
	var ee *EntryError
	require.ErrorAs(t, err, &ee)

	_, err = rt.Call(context.Background(), s, "add", make(chan int), 1)
	require.ErrorContains(t, err, "call calc.lua: arg1")
	_, err = rt.Call(nil, s, "add", 1, 2) //nolint:staticcheck // the nil context is the point
	require.EqualError(t, err, "call calc.lua: nil context")

	st := rt.Stats()
	assert.EqualValues(t, 3, st.Started)
	assert.EqualValues(t, 1, st.Returned)
	assert.EqualValues(t, 2, st.Failed)
	assert.Zero(t, st.Live)
	assert.EqualValues(t, 3, rt.SchedulerStats().Inline)
}

// TestCallCommandFromAnotherGoroutine: a Go command answered from
// another goroutine (with the values of Call's context in its Ctx), and
// a timer, bring the process back to Call's goroutine: no worker steps
// it.
func TestCallCommandFromAnotherGoroutine(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	require.NoError(t, rt.Register("db.get", func(c Call) error {
		id, _ := c.Ctx.Value(requestKey{}).(string)
		go c.Complete(c.Args[0].(string) + "@" + id)
		return nil
	}))
	s, err := rt.LoadString("h.lua", `
function handle(key)
  local a = db.get(key)
  time.sleep(0.001)
  return a .. "," .. db.get(key .. "2")
end`)
	require.NoError(t, err)
	ctx := context.WithValue(context.Background(), requestKey{}, "r1")
	before := rt.SchedulerStats()
	for range 20 {
		res, err := rt.Call(ctx, s, "handle", "k")
		require.NoError(t, err)
		require.Equal(t, []any{"k@r1,k2@r1"}, res)
	}
	after := rt.SchedulerStats()
	assert.Equal(t, before.GlobalPops+before.LocalPops, after.GlobalPops+after.LocalPops,
		"no worker stepped the processes")
	assert.EqualValues(t, 20, rt.Stats().Returned)
}

// TestCallReceivesMessages: a process run by Call that waits for
// messages is woken by Runtime.Send and answers an Inbox.
func TestCallReceivesMessages(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	s, err := rt.LoadString("recv.lua", `
function main(inbox)
  process.send(inbox, process.self())
  local total = 0
  for _ = 1, 3 do total = total + process.receive() end
  return total
end`)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	defer inbox.Close()
	ch := callIn(rt, context.Background(), s, "main", inbox.PID())
	wait, stop := context.WithTimeout(context.Background(), hungAfter)
	defer stop()
	msg, err := inbox.Receive(wait)
	require.NoError(t, err)
	pid := PID(msg.Value.(int64))
	for i := 1; i <= 3; i++ {
		require.NoError(t, rt.Send(pid, i))
	}
	res, err := awaitCall(t, ch)
	require.NoError(t, err)
	assert.Equal(t, []any{int64(6)}, res)
}

// TestCallContextKills: the end of Call's context kills the process,
// whether it waits for a message or spins in a loop on Call's own
// goroutine; Call returns a *KilledError with the context's cause.
func TestCallContextKills(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	for name, src := range map[string]string{
		"receiving": `process.send(inbox, "ready") process.receive()`,
		"spinning":  `process.send(inbox, "ready") while true do end`,
	} {
		t.Run(name, func(t *testing.T) {
			s, err := rt.LoadString(name+".lua", "function main(inbox) "+src+" end")
			require.NoError(t, err)
			inbox, err := rt.NewInbox()
			require.NoError(t, err)
			defer inbox.Close()
			ctx, cancel := context.WithCancelCause(context.Background())
			ch := callIn(rt, ctx, s, "main", inbox.PID())
			wait, stop := context.WithTimeout(context.Background(), hungAfter)
			defer stop()
			_, err = inbox.Receive(wait)
			require.NoError(t, err)
			gone := errors.New("the client went away")
			cancel(gone)
			_, err = awaitCall(t, ch)
			var ke *KilledError
			require.ErrorAs(t, err, &ke)
			assert.ErrorIs(t, err, gone)
		})
	}
	assert.EqualValues(t, 2, rt.Stats().Killed)
}

// TestCallKilled: Runtime.Kill of a process run by Call (waiting for a
// command nobody answers) ends it; the late answer is dropped.
func TestCallKilled(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	calls := make(chan Call, 1)
	require.NoError(t, rt.Register("slow.get", func(c Call) error {
		calls <- c
		return nil
	}))
	s, err := rt.LoadString("slow.lua", `function main() return slow.get() end`)
	require.NoError(t, err)
	ch := callIn(rt, context.Background(), s, "main")
	c := <-calls
	require.NoError(t, rt.Kill(c.PID, "enough"))
	_, err = awaitCall(t, ch)
	var ke *KilledError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "killed: enough", err.Error())
	assert.False(t, c.Complete("late"))
	st := rt.Stats()
	assert.EqualValues(t, 1, st.Killed)
	assert.EqualValues(t, 1, st.CompletionsDropped)
	assert.Zero(t, st.Live)
}

// TestCallShutdown: Shutdown while Calls wait for a command ends them
// (ErrShutdown) and returns nil; a Call after it is refused.
func TestCallShutdown(t *testing.T) {
	rt, err := New(Options{Workers: 1})
	require.NoError(t, err)
	calls := make(chan Call, 4)
	require.NoError(t, rt.Register("slow.get", func(c Call) error {
		calls <- c
		return nil
	}))
	s, err := rt.LoadString("slow.lua", `function main() return slow.get() end`)
	require.NoError(t, err)
	var chs []<-chan callResult
	for range 4 {
		chs = append(chs, callIn(rt, context.Background(), s, "main"))
		<-calls
	}
	ctx, cancel := context.WithTimeout(context.Background(), hungAfter)
	defer cancel()
	require.NoError(t, rt.Shutdown(ctx))
	for _, ch := range chs {
		_, err := awaitCall(t, ch)
		require.ErrorIs(t, err, ErrShutdown)
	}
	_, err = rt.Call(context.Background(), s, "main")
	require.ErrorIs(t, err, ErrClosed)
	assert.EqualValues(t, 4, rt.Stats().Cancelled)
}

// TestCallMaxStep: Options.MaxStep kills a Call's process spinning on
// the caller's goroutine.
func TestCallMaxStep(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1, MaxStep: 50 * time.Millisecond})
	s, err := rt.LoadString("spin.lua", `function main() while true do end end`)
	require.NoError(t, err)
	_, err = awaitCall(t, callIn(rt, context.Background(), s, "main"))
	var sle *StepLimitError
	require.ErrorAs(t, err, &sle)
	assert.EqualValues(t, 1, rt.Stats().StepLimited)
}

// TestCallConcurrent: many goroutines Call at once, past the bound on
// processes running on callers (their steps then run on the workers),
// with commands answered now and later: every Call gets its own answer,
// and the counters add up.
func TestCallConcurrent(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	require.NoError(t, rt.Register("db.get", func(c Call) error {
		key := c.Args[0].(int64)
		if key%2 == 0 {
			c.Complete(key * 10)
		} else {
			go c.Complete(key * 10)
		}
		return nil
	}))
	s, err := rt.LoadString("h.lua", `function handle(k) return db.get(k) + db.get(k + 1) end`)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				k := int64(g*100 + i)
				res, err := rt.Call(context.Background(), s, "handle", k)
				if err != nil || len(res) != 1 || res[0] != (2*k+1)*10 {
					t.Errorf("handle(%d): %v, %v", k, res, err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := rt.Stats()
	assert.EqualValues(t, 800, st.Returned)
	assert.EqualValues(t, 800, st.Started)
	assert.Zero(t, st.Live)
}

// TestEntryValueMadeOnce: a script's entry points are boxed as Lua
// strings once each, not at every start (a server's handler is the
// second entry, main the first), and each is its own name.
func TestEntryValueMadeOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s, err := Compile("entries.lua", "function handle() end function other() end")
	require.NoError(t, err)
	require.Equal(t, lua.LValue(lua.LString("handle")), s.entryValue("handle"))
	var v lua.LValue
	assert.Zero(t, testing.AllocsPerRun(100, func() { v = s.entryValue("handle") }))
	assert.Equal(t, lua.LValue(lua.LString("handle")), v)
	assert.Equal(t, lua.LValue(lua.LString("other")), s.entryValue("other"))
	assert.Equal(t, lua.LValue(lua.LString("handle")), s.entryValue("handle"))
	// the second entry (a server's handler, main the first) is kept too
	assert.Zero(t, testing.AllocsPerRun(100, func() { v = s.entryValue("other") }))
	assert.Equal(t, lua.LValue(lua.LString("other")), v)
}

// TestCallWaitedValuesCostNoSlices: a command's one result reaches Lua,
// and a task's return values after a wait reach the process's result,
// through the task's own buffer: a command answered in its handler
// costs the Lua call no allocation, and a process's return values after
// a wait only the result's slice.
func TestCallWaitedValuesCostNoSlices(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rt, _, _ := newTestRuntime(t, Options{})
	require.NoError(t, rt.Register("app.seven", func(c Call) error {
		c.Complete(int64(7))
		return nil
	}))
	s, err := rt.LoadString("waited.lua", `
function calls(n) local sum = 0 for i = 1, n do sum = sum + app.seven() end return sum end
function none() app.seven() return end
function two() app.seven() return 1, 2 end`)
	require.NoError(t, err)
	ctx := context.Background()
	allocs := func(entry string, args ...any) float64 {
		res, err := rt.Call(ctx, s, entry, args...)
		require.NoError(t, err)
		if entry == "calls" {
			require.Equal(t, []any{int64(7 * args[0].(int))}, res)
		}
		return testing.AllocsPerRun(200, func() { _, _ = rt.Call(ctx, s, entry, args...) })
	}
	one, eleven := allocs("calls", 1), allocs("calls", 11)
	assert.Zero(t, (eleven-one)/10, "allocations per command answered in its handler")
	none, two := allocs("none"), allocs("two")
	assert.Equal(t, 1.0, two-none, "allocations of two return values after a wait: the result's slice")
}

// TestCallCtxValueCostsNothing: a handler that reads a request-scoped
// value of its Call.Ctx (the caller's context's) gets it without the
// process's context being made: a Call costs what it does when the
// handler does not look.
func TestCallCtxValueCostsNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	type userKey struct{}
	rt, _, _ := newTestRuntime(t, Options{})
	require.NoError(t, rt.Register("app.plain", func(c Call) error {
		c.Complete(int64(1))
		return nil
	}))
	require.NoError(t, rt.Register("app.user", func(c Call) error {
		if c.Ctx.Value(userKey{}) != "ann" {
			return errors.New("no user in the call's context")
		}
		c.Complete(int64(1))
		return nil
	}))
	s, err := rt.LoadString("user.lua", `function plain() return app.plain() end function user() return app.user() end`)
	require.NoError(t, err)
	ctx := context.WithValue(context.Background(), userKey{}, "ann")
	allocs := func(entry string) float64 {
		res, err := rt.Call(ctx, s, entry)
		require.NoError(t, err)
		require.Equal(t, []any{int64(1)}, res)
		return testing.AllocsPerRun(200, func() { _, _ = rt.Call(ctx, s, entry) })
	}
	assert.Equal(t, allocs("plain"), allocs("user"))
}
