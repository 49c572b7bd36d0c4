package luaproc

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

const busyLua = `
function busy()
  local n = 0
  while true do n = n + 1 end
end
function main()
  local pid = process.spawn("busy")
  local t0 = time.monotonic()
  for i = 1, 5 do time.sleep(0.01) end
  process.kill(pid)
  return "done beside the loop"
end`

// TestBusyLoopDoesNotStopOthers: with one worker, a process in an endless
// loop does not stop main, which sleeps and kills it.
func TestBusyLoopDoesNotStopOthers(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	res, err := runLua(t, rt, "busy.lua", busyLua, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"done beside the loop"}, res)
	assert.GreaterOrEqual(t, rt.SchedulerStats().Helpers, uint64(1))
}

// TestMaxStepKillsWithTheLine: a step past MaxStep ends the process with
// an error naming it and the line its loop was at.
func TestMaxStepKillsWithTheLine(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxStep: 100 * time.Millisecond})
	res, err := runLua(t, rt, "busy.lua", busyLua+`
function watch()
  local pid = process.spawn("busy")
  return pid, process.wait(pid)
end`, "watch")
	require.NoError(t, err)
	require.Len(t, res, 4) // pid, false, the error, its traceback
	assert.Equal(t, false, res[1])
	assert.Regexp(t, `^pid `+regexp.QuoteMeta(itoa(scheduler.PID(res[0].(int64))))+` busy.lua:4: ran 100ms without blocking$`, res[2])
	assert.Equal(t, "stack traceback:\n\tbusy.lua:4: in function 'busy'", res[3])

	// the main process itself: a *ScriptError wrapping the limit
	_, err = runLua(t, rt, "spin.lua", "local n = 0\nwhile true do\n  n = n + 1\nend\n", "")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	var sle *scheduler.StepLimitError
	require.ErrorAs(t, err, &sle)
	assert.Regexp(t, `^pid \d+ spin.lua:[234]: ran 100ms without blocking$`, se.Message)
	assert.Contains(t, se.Traceback, "spin.lua:")
	assert.EqualValues(t, 2, rt.Stats().StepLimited)
}

// TestSlowStepWarnsOnceWithTheLine: without MaxStep, a step past a second
// that keeps another process waiting (spawned behind it, on the only
// worker) is logged once per process, with the line its loop is at.
func TestSlowStepWarnsOnceWithTheLine(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{Workers: 1})
	s, err := rt.LoadString("busy.lua", `
function quick() end
function crowded()
  process.spawn("quick")
  local n = 0
  while true do n = n + 1 end
end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "crowded")
	require.NoError(t, err)
	logs.waitFor(t, "without blocking")
	time.Sleep(100 * time.Millisecond) // more watchdog ticks: still once
	require.NoError(t, rt.Kill(h.PID(), "enough"))
	_, err = h.Wait(context.Background())
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "without blocking"), logs.String())
	assert.Regexp(t, `pid \d+ busy.lua:6: has run for 1(\.\d+)?s without blocking`, logs.String())
}

// TestSlowStepNotForALoneComputation: a batch computation that delays
// nobody runs past a second without a warning.
func TestSlowStepNotForALoneComputation(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{Workers: 1})
	res, err := runLua(t, rt, "batch.lua", `
function main()
  local t0, n = time.monotonic(), 0
  while time.monotonic() - t0 < 1.5 do n = n + 1 end
  return n > 0
end`, "main")
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{true}, res)
	assert.NotContains(t, logs.String(), "without blocking")
	assert.Zero(t, rt.Stats().SlowSteps)
}

// TestShutdownStopsABusyLoop: Shutdown ends a process in an endless loop
// at once, not at the end of the grace period.
func TestShutdownStopsABusyLoop(t *testing.T) {
	rt, err := New(Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := rt.LoadString("busy.lua", `
function busy(inbox)
  process.send(inbox, "spinning")
  local n = 0
  while true do n = n + 1 end
end`)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "busy", int64(inbox.PID()))
	require.NoError(t, err)
	_, err = inbox.Receive(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, rt.Shutdown(ctx), "nothing abandoned")
	_, err = h.Result()
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	assert.EqualValues(t, 1, rt.Stats().Cancelled, "the inbox ends without an error")
}

// TestOsExit: os.exit reports its status through Options.Exit once and
// ends the calling process, which pcall cannot keep going.
func TestOsExit(t *testing.T) {
	var codes []int
	var calls atomic.Int32
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"os"}, Exit: func(code int) { calls.Add(1); codes = append(codes, code) }})
	_, err := runLua(t, rt, "exit.lua", `
function main()
  pcall(os.exit, 7)
  while true do end -- never finishes: the pcall did not keep it going
end`, "main")
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 7, ee.Code)
	_, err = runLua(t, rt, "exit2.lua", `os.exit(false)`, "")
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.Code)
	assert.Equal(t, []int{7}, codes, "only the first is reported")
	assert.EqualValues(t, 1, calls.Load())
}

// TestMailboxLimitAndWarning: sends to a full mailbox return nil,
// "mailbox full"; without a limit, a mailbox of MailboxWarning messages
// (100,000 by default; 1,000 here, so that the race run stays short) is
// logged once.
func TestMailboxLimitAndWarning(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{MaxMailbox: 5})
	res, err := runLua(t, rt, "flood.lua", `
function deaf() time.sleep(math.huge) end
function main()
  local pid = process.spawn("deaf")
  local ok = 0
  for i = 1, 8 do
    local r, err = process.send(pid, i)
    if r then ok = ok + 1 else last = err end
  end
  process.kill(pid)
  return ok, last
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(5), "mailbox full"}, res)
	assert.EqualValues(t, 3, rt.Stats().MessagesRefused)

	rt2, _, logs := newTestRuntime(t, Options{MailboxWarning: 1000})
	res, err = runLua(t, rt2, "flood.lua", `
function deaf() time.sleep(math.huge) end
function main()
  local pid = process.spawn("deaf")
  for i = 1, 1000 do assert(process.send(pid, i)) end
  time.sleep(1.1) -- it takes none for a second
  for i = 1, 2000 do assert(process.send(pid, i)) end
  process.kill(pid)
  return true
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "messages are waiting for process"), logs.String())
	assert.Contains(t, logs.String(), "which has taken none for 1")
}

// TestMailboxWarningNotForABusyReceiver: a process that takes its
// messages as fast as it can, with thousands waiting, is not warned of.
func TestMailboxWarningNotForABusyReceiver(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{Workers: 2, MailboxWarning: 1000})
	each := 50000 // 200,000 replies, 200 times the threshold
	if raceEnabled {
		each = 1000 // 4 times it: under the race detector 20,000 took 25 s at -cpu 1
	}
	res, err := runLua(t, rt, "replies.lua", `
function producer(to, n) for i = 1, n do process.send(to, i) end end
function main(each)
  for i = 1, 4 do process.spawn("producer", process.self(), each) end
  local sum = 0
  for i = 1, 4 * each do
    local v = process.receive()
    for j = 1, 20 do sum = sum + v % 7 end -- some work per reply
  end
  return sum > 0
end`, "main", each)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{true}, res)
	assert.NotContains(t, logs.String(), "messages are waiting", "main took them all along")
}

// TestMaxProcsFromLua: a spawn beyond MaxProcs returns nil and says why.
func TestMaxProcsFromLua(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{MaxProcs: 10})
	res, err := runLua(t, rt, "storm.lua", `
function idle() process.receive() end
function main()
  local pids, err = {}
  while true do
    local pid, e = process.spawn("idle")
    if not pid then err = e break end
    pids[#pids + 1] = pid
  end
  for _, pid in ipairs(pids) do process.kill(pid) end
  return #pids, err
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(9), "process limit reached (see --max-procs, Options.MaxProcs)"}, res)
}

// TestMessagesLeftUnreadAreCounted: messages a process received into its
// mailbox but never took count as dropped when it ends.
func TestMessagesLeftUnreadAreCounted(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "unread.lua", `
function takes_one(boss)
  process.send(boss, "ready")
  -- "all sent" comes after the five (one sender's messages keep their
  -- order); a 50 ms sleep here could end before they arrived
  process.receive{match = function(m) return m == "all sent" end}
  process.receive() -- takes one; the other four stay in its mailbox
  process.send(boss, "took one")
end
function main()
  local pid = process.spawn("takes_one", process.self())
  process.receive()
  for i = 1, 5 do process.send(pid, i) end
  process.send(pid, "all sent")
  process.receive()
  return process.wait(pid)
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true}, res)
	assert.EqualValues(t, 4, rt.Stats().MessagesDropped)
}

// TestStackOverflowHasFileLine: unbounded recursion raises
// file:line: stack overflow, with a traceback when it ends the process.
func TestStackOverflowHasFileLine(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	src := "local function f(n)\n  return 1 + f(n + 1)\nend\nfunction caught() return pcall(f, 1) end\nfunction main() f(1) end\n"
	res, err := runLua(t, rt, "deep.lua", src, "caught")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, "deep.lua:2: stack overflow"}, res)
	_, err = runLua(t, rt, "deep.lua", src, "main")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "deep.lua:2: stack overflow", se.Message)
	assert.True(t, strings.HasPrefix(se.Traceback, "stack traceback:\n\tdeep.lua:2: in function 'f'"), se.Traceback)
	assert.False(t, errors.Is(err, context.Canceled))
}

// TestSpawnStormAccounting: a storm of processes that return, fail, sleep
// or wait forever, cut off by Shutdown with a short deadline: every
// process is counted exactly once by how it ended.
func TestSpawnStormAccounting(t *testing.T) {
	for round := range 3 {
		rt, err := New(Options{Workers: 4, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		s, err := rt.LoadString("storm.lua", `
function child(i)
  if i % 4 == 0 then error("child fails") end
  if i % 4 == 1 then time.sleep(0.001) end
  if i % 4 == 2 then process.receive() end
  return i
end
function main()
  local i = 0
  while true do
    i = i + 1
    if not process.spawn("child", i) then return i end
    if i % 100 == 0 then time.sleep(0) end
  end
end`)
		require.NoError(t, err)
		_, err = rt.Start(context.Background(), s, "main")
		require.NoError(t, err)
		// Wait for the storm to be under way (a child has failed) rather
		// than sleeping 30 ms: on a loaded machine main may not have run by
		// then. The "deadline" that cuts Shutdown off is the first process
		// it cancelled being counted, not 20 ms, which could pass before
		// any had taken its cancel and leave none cancelled.
		require.Eventually(t, func() bool { return rt.Stats().Failed > 0 }, 20*time.Second, time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for rt.Stats().Cancelled == 0 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		rt.Shutdown(ctx)
		cancel()
		st := rt.Stats()
		ended := st.Returned + st.Failed + st.Killed + st.Cancelled + st.Abandoned
		require.Equal(t, st.Started, ended, "round %d: %+v", round, st)
		require.Zero(t, st.Live)
		require.Greater(t, st.Failed, uint64(0))
		require.Greater(t, st.Cancelled, uint64(0))
	}
}

// TestWorkBehindABusyStepIsHandedOff: with one worker kept busy by two
// chatty processes, a process that a busy loop woke (so queued on the
// loop's worker) still runs while the loop goes on: the watchdog moves it
// to the global queue. (It used to wait for the loop to end.)
func TestWorkBehindABusyStepIsHandedOff(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	res, err := runLua(t, rt, "handoff.lua", `
function x(main) process.receive(); process.send(main, "x ran") end
function ping() local peer = process.receive() while true do process.send(peer, 1) process.receive() end end
function pong() local peer = process.receive() while true do process.receive() process.send(peer, 1) end end
function spinner(xpid)
  process.send(xpid, "go") -- x goes onto this worker's deque
  while true do end        -- until main kills it, once x has run
end
function main()
  local me = process.self()
  local xp = process.spawn("x", me)
  local a, b = process.spawn("ping"), process.spawn("pong")
  process.send(a, b); process.send(b, a)
  time.sleep(0.05)
  local sp = process.spawn("spinner", xp)
  local got = process.receive()
  for _, pid in ipairs({sp, a, b}) do process.kill(pid) end
  return got
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"x ran"}, res)
}

// TestPcallAtTheLimitIsRefused: inside 200 nested pcalls, another pcall
// is refused with C stack overflow, as often as it is tried (each refusal
// takes no coroutine: it used to keep one per refusal).
func TestPcallAtTheLimitIsRefused(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "deep.lua", `
local refused, msg = 0
local function nest(d)
  if d == 0 then
    for i = 1, 50 do
      local ok, err = pcall(function() end)
      if not ok then refused, msg = refused + 1, err end
    end
    return
  end
  pcall(nest, d - 1)
end
function main()
  nest(200)
  return refused, msg
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(50), "deep.lua:6: C stack overflow (coroutines, pcalls and xpcalls nested more than 200 deep)"}, res)
}

// TestRecursionAsDeepAsLua51: Lua calls nest to Lua 5.1's 20,000 — in a
// process's own code, inside pcall and inside a coroutine — and deeper is
// file:line: stack overflow. The frame stack grows on demand, so the
// depth costs an idle process nothing (the heap per idle process is in
// the harness's spawn row).
func TestRecursionAsDeepAsLua51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "deep.lua", `
local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
-- a tree 10,000 deep, walked recursively
local function walk(t) local n = 1 for _, c in ipairs(t) do n = n + walk(c) end return n end
function main()
  local root, cur = {}, nil
  cur = root
  for i = 1, 9990 do local c = {} cur[1] = c cur = c end
  local ok, err = pcall(depth, 30000)
  return depth(19900), select(2, pcall(depth, 19900)),
    coroutine.wrap(function() return depth(19900) end)(), walk(root), ok, err
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(19900), int64(19900), int64(19900), int64(9991), false, "deep.lua:2: stack overflow"}, res)
}

// TestKillEndsATrappedShutdown: a process that traps exits takes the
// shutdown as an exit event and may run on; a Kill then still ends it at
// once (a busy loop at its next instruction), and Shutdown returns without
// abandoning it.
func TestKillEndsATrappedShutdown(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	s, err := rt.LoadString("trap.lua", `
function main()
  process.trap_exits(true)
  log.info("trapping")
  local msg, _, kind = process.receive()
  log.info("trapped " .. kind)
  local n = 0
  while true do n = n + 1 end
end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	logs.waitFor(t, "trapping") // before the shutdown, or it would just end
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		stopped <- rt.Shutdown(ctx)
	}()
	logs.waitFor(t, "trapped exit") // it has the shutdown and spins
	require.NoError(t, rt.Kill(h.PID(), "enough"))
	select {
	case err := <-stopped:
		require.NoError(t, err, "nothing abandoned")
	case <-time.After(20 * time.Second): // only bounds a hang: the kill works in milliseconds
		t.Fatal("the kill did not end the process that trapped the shutdown")
	}
	assert.Zero(t, rt.Stats().Abandoned)
	assert.EqualValues(t, 1, rt.Stats().Killed, "the kill took over from the trapped shutdown")
}

// TestKillStopsBusyCodeAnywhere: process.kill ends a process busy in its
// own code, inside pcall (also a pcall retried for ever), inside a
// coroutine it resumes, a coroutine.wrap function and a process.all
// function: every coroutine of a process checks its interrupt.
func TestKillStopsBusyCodeAnywhere(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	res, err := runLua(t, rt, "kill.lua", `
local parent
local function spin() process.send(parent, "spinning"); while true do end end
local kinds = {
  plain = spin,
  pcall = function() while true do pcall(spin) end end,
  coroutine = function() coroutine.resume(coroutine.create(spin)) end,
  wrap = function() coroutine.wrap(spin)() end,
  all = function() process.all(spin) end,
}
function busy(kind, from) parent = from; kinds[kind]() end
function main()
  local out = {}
  for _, kind in ipairs({"plain", "pcall", "coroutine", "wrap", "all"}) do
    local pid = process.spawn("busy", kind, process.self())
    assert(process.receive() == "spinning")
    process.kill(pid, kind)
    local ok, err = process.wait(pid)
    out[#out + 1] = tostring(ok) .. " " .. tostring(err)
  end
  return table.concat(out, "|")
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"false killed: plain|false killed: pcall|false killed: coroutine|false killed: wrap|false killed: all"}, res)
}

// TestWokenBehindALongStepRuns: a process woken by one that goes on
// computing instead of blocking (it waits in its worker's runnext) is run
// elsewhere after a watchdog tick, with one worker or two: the sender's
// loop ends only when the woken process has run. It would wait for ever
// if nothing took it from runnext.
func TestWokenBehindALongStepRuns(t *testing.T) {
	for _, workers := range []int{1, 2} {
		rt, _, _ := newTestRuntime(t, Options{Workers: workers})
		var ran atomic.Bool
		require.NoError(t, rt.RegisterGoModule("flag", map[string]Func{
			"set": func([]any) ([]any, error) { ran.Store(true); return nil, nil },
			"get": func([]any) ([]any, error) { return payload.Payloads{ran.Load()}, nil },
		}))
		res, err := runLua(t, rt, "long.lua", `
function woken() process.receive(); flag.set() end
function main()
  local pid = process.spawn("woken")
  process.sleep(0) -- let it block in receive
  process.send(pid, "go")
  local spins = 0
  while not flag.get() do spins = spins + 1 end
  return true
end`, "main")
		require.NoError(t, err)
		assert.Equal(t, payload.Payloads{true}, res)
	}
}
