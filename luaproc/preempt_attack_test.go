package luaproc

// Attacks on preemption (preempt.go): code a nested process may run
// while its caller waits for it, and what a script may see of it.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lua "github.com/luarun/luarun/lua"
)

// preemptInGoLua: the worker spins in a loop whose time goes to a long
// Go function that checks the interrupt (table.concat ticks: lua's
// Tick, interrupt.go). A preemption asked for while the concat runs must
// not be lost there: the worker steps aside at its next instruction
// after the concat, and the caller sees the test's message.
const preemptInGoLua = `
local big = {}
for i = 1, 200000 do big[i] = "x" end
function worker(to)
  process.send(to, process.self())
  local req = process.receive()
  process.send(to, "running")
  local n = 0
  repeat n = n + #table.concat(big) until probe.stopped()
  process.send(req, n > 0)
  process.receive()
end
function caller(to)
  local w = process.spawn("worker", to)
  process.receive()
  process.send(w, process.self())
  local first = process.receive() -- runs w's step nested
  process.send(to, first)
  return first, (process.receive())
end`

// TestPreemptionNotLostInALongGoFunction: a message for the caller
// reaches it while its nested peer spins through table.concat.
func TestPreemptionNotLostInALongGoFunction(t *testing.T) {
	rt, stop := preemptRuntime(t, 1)
	defer stop()
	h, _, inbox := preemptStart(t, rt, preemptInGoLua, "")
	require.NoError(t, rt.Send(h.PID(), "from Go"))
	msg, err := inbox.Receive(testContext(t)) // the caller, released
	require.NoError(t, err, "the caller stays captive: the preemption was taken inside table.concat's Tick and dropped")
	require.Equal(t, "from Go", msg.Value)
	stop()
	res, err := h.Wait(testContext(t))
	require.NoError(t, err)
	require.Equal(t, []any{"from Go", true}, res)
}

// withPreemptingReceive adds preempting_receive to rt's
// processes: process.receive, with a preemption asked for (Preempt, as a
// releaseHost racing the step would) just before the receive waits. Its
// flag is then first seen by the instruction after the receive's yield:
// in the code that forwards the blocking call's marker out to the task
// (prelude.lua's pcall_step, pass).
func withPreemptingReceive(t *testing.T, rt *Runtime) {
	t.Helper()
	rt.extraGlobals = func(L *lua.LState, g *lua.LTable) {
		pt, ok := g.RawGetString("process").(*lua.LTable)
		require.True(t, ok)
		recv, ok := pt.RawGetString("receive").(*lua.LFunction)
		require.True(t, ok)
		g.RawSetString("preempting_receive", L.NewFunction(func(L *lua.LState) int {
			procOf(L).Preempt()
			return recv.GFunction(L)
		}))
	}
	rt.newTemplate()
}

// TestPreemptionWhileABlockingCallIsForwarded: a preemption asked for
// while a blocking call made inside a pcall, a coroutine, or both is on
// its way out to the task must neither replace the call's request
// (p.reqAt) nor turn the forwarded marker into a yield from outside a
// coroutine: the receive gets the message sent to it.
func TestPreemptionWhileABlockingCallIsForwarded(t *testing.T) {
	const src = `
local modes = {
  pcall = function() return select(2, pcall(preempting_receive, 10)) end,
  coroutine = function() return select(2, coroutine.resume(coroutine.create(preempting_receive), 10)) end,
  wrap = function() return coroutine.wrap(function() return preempting_receive(10) end)() end,
  deep = function()
    return select(2, pcall(coroutine.wrap(function() return select(2, xpcall(function() return preempting_receive(10) end, debug.traceback)) end)))
  end,
}
function main(to, mode)
  process.send(to, "waits") -- in this step: the test's message comes after the receive waits
  return modes[mode]()
end`
	for _, mode := range []string{"pcall", "coroutine", "wrap", "deep"} {
		t.Run(mode, func(t *testing.T) {
			rt, _, _ := newTestRuntime(t, Options{Workers: 1})
			withPreemptingReceive(t, rt)
			s, err := rt.LoadString("forward.lua", src)
			require.NoError(t, err)
			inbox, err := rt.NewInbox()
			require.NoError(t, err)
			t.Cleanup(func() { _ = inbox.Close() })
			h, err := rt.Start(context.Background(), s, "main", int64(inbox.PID()), mode)
			require.NoError(t, err)
			_, err = inbox.Receive(testContext(t))
			require.NoError(t, err)
			sendErr := rt.Send(h.PID(), "hello") // fails if the process has ended already
			res, err := h.Wait(testContext(t))
			require.NoError(t, err)
			require.NoError(t, sendErr)
			require.Equal(t, "hello", res[0], "%v", res)
		})
	}
}

// captorLua: the worker, run nested in its caller's receive, loops for
// good where it cannot yield (mode: a sort comparator, a __lt
// metamethod, a gsub callback, a __tostring called by tostring).
const captorLua = `
local function forever() local n = 0 while true do n = n + 1 end end
local modes = {
  comparator = function() table.sort({3, 2, 1}, function(a, b) forever() end) end,
  lt = function()
    local mt = {__lt = function() forever() end}
    return setmetatable({}, mt) < setmetatable({}, mt)
  end,
  gsub = function() return string.gsub("abc", ".", function() forever() end) end,
  tostring = function() return tostring(setmetatable({}, {__tostring = function() forever() end})) end,
}
function worker(to, mode)
  process.send(to, process.self())
  process.receive()
  process.send(to, "running")
  modes[mode]()
end
function caller(to, mode)
  local w = process.spawn("worker", to, mode)
  process.receive()
  process.send(w, process.self())
  return process.receive() -- runs w's step nested
end`

// TestMaxStepBoundsACaptor: a nested worker that loops where it cannot
// step aside holds its caller past the caller's kill (the caller's code
// is not running: its receive waits for the nested step); MaxStep ends
// the worker's step, and the kill then reaches the caller.
func TestMaxStepBoundsACaptor(t *testing.T) {
	for _, mode := range []string{"comparator", "lt", "gsub", "tostring"} {
		t.Run(mode, func(t *testing.T) {
			rt, _, _ := newTestRuntime(t, Options{Workers: 1, MaxStep: 100 * time.Millisecond})
			h, w, _, first := startPair(t, rt, "captor.lua", captorLua, mode)
			require.Equal(t, "running", first)
			require.NoError(t, rt.Kill(h.PID(), "caller killed"))
			_, err := h.Wait(testContext(t))
			require.ErrorContains(t, err, "caller killed")
			if wh, ok := rt.Lookup(w); ok { // else it has ended (MaxStep's kill)
				_, err = wh.Wait(testContext(t))
				require.ErrorContains(t, err, "without blocking")
			}
		})
	}
}

// withPreemptNow adds preempt_now() to rt's processes: a preemption
// asked for now, as a releaseHost would; the coroutine that called it
// steps aside before its next instruction.
func withPreemptNow(t *testing.T, rt *Runtime) {
	t.Helper()
	rt.extraGlobals = func(L *lua.LState, g *lua.LTable) {
		g.RawSetString("preempt_now", L.NewFunction(func(L *lua.LState) int {
			procOf(L).Preempt()
			return 0
		}))
	}
	rt.newTemplate()
}

// TestPreemptedCoroutineNotResumedByASibling: a script's coroutine,
// preempted while process.all's first function resumes it, is not
// suspended for the other functions: in Lua, a coroutine another one
// resumed is "normal" until it yields, and resuming it fails. A sibling
// that resumed it here would run the rest of it (its values dropped),
// and its own resumer would find it dead.
func TestPreemptedCoroutineNotResumedByASibling(t *testing.T) {
	const src = `
function main()
  local co = coroutine.create(function()
    preempt_now()
    local x = 1 -- preempted before this
    return "done", x
  end)
  local seen
  local a, b = process.all(
    function() local ok, v = coroutine.resume(co); return tostring(ok) .. "," .. tostring(v) end,
    function()
      seen = coroutine.status(co)
      return tostring((coroutine.resume(co, "stolen")))
    end)
  return seen, a, b
end`
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	withPreemptNow(t, rt)
	s, err := rt.LoadString("sibling.lua", src)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	res, err := h.Wait(testContext(t))
	require.NoError(t, err)
	require.Equal(t, []any{"normal", "true,done", "false"}, res)
}

// TestPreemptionSendsHookEventsOnce: a coroutine with a line and a count
// hook, preempted before several of its instructions, sends the same
// events as one that is not (the preempted instruction's events are sent
// when it runs, after the resume).
func TestPreemptionSendsHookEventsOnce(t *testing.T) {
	const src = `
local function run(pause)
  local log = {}
  local co = coroutine.create(function()
    debug.sethook(function(ev, line) log[#log + 1] = ev .. ":" .. tostring(line) end, "l", 3)
    local s = 0
    for i = 1, 4 do
      pause()
      s = s + i
    end
    pause()
    debug.sethook()
    return s
  end)
  local ok, s = coroutine.resume(co)
  return table.concat(log, " ") .. " -> " .. tostring(ok) .. "," .. tostring(s)
end
function main()
  return run(os.clock), run(preempt_now) -- both Go functions: no events of their own
end`
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	withPreemptNow(t, rt)
	s, err := rt.LoadString("hooks.lua", src)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	res, err := h.Wait(testContext(t))
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.Contains(t, res[0], "-> true,10")
	require.Equal(t, res[0], res[1])
	require.NoError(t, rt.Shutdown(context.Background()))
	// its first step, one after each of the five preemptions
	require.GreaterOrEqual(t, rt.sched.Stats().Steps, uint64(6), "preempted")
}
