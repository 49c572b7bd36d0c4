package luaproc

// Tests of preemption (preempt.go) through nested steps: a process whose
// step runs inside its caller's receive steps aside when something comes
// for the caller, from wherever its code runs — its own coroutine, a
// pcall's, a script's coroutine, a process.all function — and goes on
// afterwards as if nothing had happened. Where it cannot yield (a sort
// comparator) it steps aside once that returns.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// preemptLua: worker(to, mode) tells the test it waits, takes the
// caller's request, tells the test it runs, and then spins inside mode's
// context until the test's flag says stop (probe.stopped, a Go function:
// no yield), and answers the caller with what its spinning function
// returned. The caller's receive runs the worker's step nested (it has
// just handed it the request); the caller tells the test what it
// received first, which it can only do once the worker has stepped
// aside, and the test raises the flag only then.
const preemptLua = `
local function spin()
  local n = 0
  repeat n = n + 1 until probe.stopped()
  return n > 0, "tail", nil, 4
end
local modes = {
  plain = function() return spin() end,
  pcall = function() return select(2, pcall(spin)) end,
  coroutine = function() return coroutine.wrap(spin)() end,
  deep = function()
    return select(2, pcall(coroutine.wrap(function() return select(2, xpcall(spin, debug.traceback)) end)))
  end,
  all = function() local a = process.all(function() return spin() end); return a, "tail", nil, 4 end,
}
function worker(to, mode)
  process.send(to, process.self())
  local req = process.receive()
  process.send(to, "running")
  local r = {modes[mode]()}
  process.send(req, select("#", unpack(r, 1, 4)) .. ":" .. tostring(r[1]) .. "," .. tostring(r[2]) .. "," .. tostring(r[3]) .. "," .. tostring(r[4]))
  process.receive()
end
function caller(to, mode)
  local w = process.spawn("worker", to, mode)
  process.receive() -- the test's go-ahead: w waits in receive
  process.send(w, process.self())
  local first = process.receive() -- runs w's step nested
  process.send(to, first)
  return first, (process.receive())
end`

// preemptRuntime is a runtime of workers with the probe module: its
// stopped() answers whether stop has been called.
func preemptRuntime(t *testing.T, workers int) (*Runtime, func()) {
	t.Helper()
	rt, _, _ := newTestRuntime(t, Options{Workers: workers})
	var stopped atomic.Bool
	require.NoError(t, rt.RegisterGoModule("probe", map[string]Func{
		"stopped": func([]any) ([]any, error) { return []any{stopped.Load()}, nil },
	}))
	return rt, func() { stopped.Store(true) }
}

// startPair loads src (named name), starts its caller with the test's
// inbox and args, takes the PID of the peer the caller spawned (its
// first message to the inbox; the peer is killed at cleanup), sends the
// caller its go-ahead, and returns the caller, the peer, the inbox and
// the next message the inbox gets (the peer saying it runs).
func startPair(t *testing.T, rt *Runtime, name, src string, args ...any) (Handle, PID, *Inbox, any) {
	t.Helper()
	s, err := rt.LoadString(name, src)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	t.Cleanup(func() { _ = inbox.Close() })
	h, err := rt.Start(context.Background(), s, "caller", append([]any{int64(inbox.PID())}, args...)...)
	require.NoError(t, err)
	msg, err := inbox.Receive(testContext(t))
	require.NoError(t, err)
	peer := PID(msg.Value.(int64))
	t.Cleanup(func() { _ = rt.Kill(peer, "test over") })
	require.NoError(t, rt.Send(h.PID(), "start"))
	msg, err = inbox.Receive(testContext(t))
	require.NoError(t, err)
	return h, peer, inbox, msg.Value
}

// preemptStart starts caller in mode and returns it, the worker and the
// test's inbox once the worker spins.
func preemptStart(t *testing.T, rt *Runtime, src, mode string) (Handle, PID, *Inbox) {
	t.Helper()
	h, w, inbox, first := startPair(t, rt, "preempt.lua", src, mode)
	require.Contains(t, []any{"running", "in comparator"}, first)
	return h, w, inbox
}

// TestPreemptedEverywhereItCanYield: in each context, a message to the
// caller makes the worker step aside; the caller gets it while the
// worker still spins; the worker's function, continued, returns its
// four values intact.
func TestPreemptedEverywhereItCanYield(t *testing.T) {
	for _, mode := range []string{"plain", "pcall", "coroutine", "deep", "all"} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/workers=%d", mode, workers), func(t *testing.T) {
				rt, stop := preemptRuntime(t, workers)
				h, _, inbox := preemptStart(t, rt, preemptLua, mode)
				require.NoError(t, rt.Send(h.PID(), "from Go"))
				msg, err := inbox.Receive(testContext(t)) // the caller, released
				require.NoError(t, err)
				require.Equal(t, "from Go", msg.Value)
				stop()
				res, err := h.Wait(testContext(t))
				require.NoError(t, err)
				require.Equal(t, []any{"from Go", "4:true,tail,nil,4"}, res)
			})
		}
	}
}

// TestKillReachesTheCallerEverywhere: a kill of the caller while the
// worker spins in each context ends the caller; the worker goes on, and
// ends once stopped.
func TestKillReachesTheCallerEverywhere(t *testing.T) {
	for _, mode := range []string{"plain", "pcall", "coroutine", "deep", "all"} {
		t.Run(mode, func(t *testing.T) {
			rt, stop := preemptRuntime(t, 1)
			h, w, _ := preemptStart(t, rt, preemptLua, mode)
			require.NoError(t, rt.Kill(h.PID(), "stop"))
			_, err := h.Wait(testContext(t))
			require.ErrorContains(t, err, "stop")
			stop()
			require.NoError(t, rt.Send(w, "end"))
			wh, ok := rt.Lookup(w)
			require.True(t, ok)
			_, err = wh.Wait(testContext(t))
			require.NoError(t, err)
		})
	}
}

// TestPreemptionWaitsForTheComparator: a worker inside a sort comparator
// cannot yield; the message for its caller is seen once the sort has
// returned (it steps aside at its next instruction), and the sort's
// result is intact.
func TestPreemptionWaitsForTheComparator(t *testing.T) {
	const src = `
function worker(to)
  process.send(to, process.self())
  local req = process.receive()
  local t = {}
  for i = 1, 300 do t[i] = (i * 7919) % 300 end
  local first = true
  table.sort(t, function(a, b)
    if first then
      first = false
      process.send(to, "in comparator")
      repeat until probe.stopped() -- spins until the test says
    end
    return a < b
  end)
  for i = 2, #t do assert(t[i - 1] <= t[i]) end
  process.send(req, "sorted")
  process.receive()
end
function caller(to)
  local w = process.spawn("worker", to)
  process.receive()
  process.send(w, process.self())
  local first = process.receive()
  process.send(to, first)
  return first, (process.receive())
end`
	rt, stop := preemptRuntime(t, 1)
	h, _, inbox := preemptStart(t, rt, src, "")
	require.NoError(t, rt.Send(h.PID(), "from Go")) // asks the worker to step aside: it cannot yet
	stop()
	msg, err := inbox.Receive(testContext(t))
	require.NoError(t, err)
	require.Equal(t, "from Go", msg.Value)
	res, err := h.Wait(testContext(t))
	require.NoError(t, err)
	require.Equal(t, []any{"from Go", "sorted"}, res)
}

// TestCallReleasedByAKill: a process.call whose callee's step runs
// nested inside it (nestedCall) and spins is ended by a kill of the
// caller; a call answered inside the nested step returns the reply, and
// one whose callee replies later still gets it.
func TestCallReleasedByAKill(t *testing.T) {
	const src = `
function server(to)
  process.send(to, process.self())
  while true do
    local req, from, kind, call = process.receive()
    if req == "spin" then
      process.send(to, "running")
      repeat until probe.stopped()
    end
    process.reply(call, req .. "!")
  end
end
function caller(to, first)
  local s = process.spawn("server", to)
  process.receive() -- the test's go-ahead: s waits in receive
  local a = process.call(s, "quick")
  local b = process.call(s, first)
  return a, b
end`
	for _, kill := range []bool{true, false} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			rt, stop := preemptRuntime(t, 1)
			h, _, _, first := startPair(t, rt, "call.lua", src, "spin")
			require.Equal(t, "running", first)
			if kill {
				require.NoError(t, rt.Kill(h.PID(), "stop"))
				_, err := h.Wait(testContext(t))
				require.ErrorContains(t, err, "stop")
				stop()
				return
			}
			require.NoError(t, rt.Send(h.PID(), "aside")) // released; the call waits on
			stop()
			res, err := h.Wait(testContext(t))
			require.NoError(t, err)
			require.Equal(t, []any{"quick!", "spin!"}, res)
		})
	}
}
