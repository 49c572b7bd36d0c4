package luaproc

// Tests of process.call's nested step (nestedCall, calls.go): a local
// call runs its callee's step inside its own and returns a reply sent
// from it without parking. What the call's ordinary wait gave must still
// hold: its timeout, and the callee not keeping the caller's state
// through an answered request.

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNestedCallTimeout: a call whose callee spins in the step the call
// runs nested still times out on time. The callee spins until the test
// stops it, which it does only once the caller reported its call's
// result; a call held until its callee's step ends never reports (the
// test's context, 20 s, ends it). The first call arms the caller's
// timer, so that the second, whose deadline that timer covers, runs its
// callee nested (a call that must arm a timer of its own does not).
func TestNestedCallTimeout(t *testing.T) {
	const src = `
function server(to)
  process.send(to, process.self())
  while true do
    local req, from, kind, call = process.receive()
    if req == "spin" then
      repeat until probe.stopped()
    end
    process.reply(call, req)
  end
end
function caller(to)
  local s = process.spawn("server", to)
  process.receive() -- the test's go-ahead: s waits in receive
  -- arms a timer for its deadline, which the next call's, later, reuses
  assert(process.call(s, "quick", 1) == "quick")
  process.send(to, "armed")
  process.receive() -- from the test: the next call is not nested in s's step
  local r, err = process.call(s, "spin", 1.5)
  process.send(to, tostring(r) .. "," .. tostring(err))
  return r, err
end`
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			rt, stop := preemptRuntime(t, workers)
			t.Cleanup(stop)
			h, _, inbox, first := startPair(t, rt, "call.lua", src)
			require.Equal(t, "armed", first)
			require.NoError(t, rt.Send(h.PID(), "go on"))
			msg, err := inbox.Receive(testContext(t)) // the call's result, the server still spinning
			require.NoError(t, err, "the call did not time out while its callee spun")
			require.Equal(t, "nil,timeout", msg.Value)
			stop()
			res, err := h.Wait(testContext(t))
			require.NoError(t, err)
			require.Equal(t, []any{nil, "timeout"}, res)
		})
	}
}

// TestNestedCallKeepsNoCaller: a server that keeps the handles of the
// calls it answered must not keep their callers' states alive through
// them (endCall clears the request's task; the nested fast path must
// too). 40 callers holding 1 MB each call a server that keeps every
// handle; after they end, the heap must not hold their megabytes.
func TestNestedCallKeepsNoCaller(t *testing.T) {
	const callers = 40
	const src = `
function server()
  local kept = {}
  while true do
    local req, from, kind, call = process.receive()
    if req == "stop" then return #kept end
    kept[#kept + 1] = call
    process.reply(call, "ok")
  end
end
function caller(s)
  local big = string.rep("x", 1024 * 1024 - 1) .. process.self()
  assert(process.call(s, "hello") == "ok")
  return #big
end
function main(n)
  local s = process.spawn("server")
  for i = 1, n do process.spawn_monitor("caller", s) end
  for i = 1, n do
    local ev, _, kind = process.receive()
    assert(kind == "down" and ev.reason == "normal", tostring(ev.reason))
  end
  return s
end`
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	s, err := rt.LoadString("keep.lua", src)
	require.NoError(t, err)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	h, err := rt.Start(context.Background(), s, "main", int64(callers))
	require.NoError(t, err)
	res, err := h.Wait(testContext(t)) // after the callers' downs: they have ended
	require.NoError(t, err)
	srv := PID(res[0].(int64))
	t.Cleanup(func() { _ = rt.Kill(srv, "test over") })
	runtime.GC()
	runtime.ReadMemStats(&m1)
	grew := float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / (1 << 20)
	t.Logf("heap grew %.1f MB with %d ended callers of 1 MB", grew, callers)
	require.Less(t, grew, float64(callers)/2, "the server keeps its ended callers' states")
}

// TestNestedCallRouting: what a callee's nested step sends back before
// the reply goes where it would have gone without nesting. Two calls of
// process.all to one server: the first's nested step sends a plain
// message back (taken in, the call waits); the second's answers the
// first call, sends a plain message and answers the second (at cbb47ce
// that call found no handed process and waited: a guard for when it
// nests). And a callee that ends in the nested step: having replied,
// the call has the reply (the fast path); without replying, the call
// fails with its end (checked by a trace at cbb47ce: both nest).
func TestNestedCallRouting(t *testing.T) {
	const src = `
function server(parent)
  process.send(parent, "ready")
  local first
  while true do
    local req, from, kind, call = process.receive()
    if req == "first" then
      first = call
      process.send(from, "ack1")
    elseif req == "second" then
      process.reply(first, "r1")
      process.send(from, "note")
      process.reply(call, "r2")
    elseif req == "die" then
      error("boom")
    elseif req == "reply and die" then
      process.reply(call, "last words")
      error("boom")
    end
  end
end
local function start() -- a server waiting in receive
  local s = process.spawn("server", process.self())
  assert(process.receive() == "ready")
  -- a step of our own, not one nested in s's receive: a nested step
  -- runs none, and this one's calls are to run s's steps nested
  time.sleep(0.001)
  return s
end
function main()
  local s = start()
  local r1, r2 = process.all(function() return process.call(s, "first") end,
                             function() return process.call(s, "second") end)
  local m1, m2 = process.receive(), process.receive()
  local d2 = process.call(start(), "reply and die") -- first: a miss makes the next calls skip nesting
  local d1, err1 = process.call(start(), "die")
  process.kill(s, "done")
  return r1, r2, m1, m2, d1, err1:match("ended before replying") ~= nil, d2
end`
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			rt, _, _ := newTestRuntime(t, Options{Workers: workers})
			s, err := rt.LoadString("route.lua", src)
			require.NoError(t, err)
			h, err := rt.Start(context.Background(), s, "main")
			require.NoError(t, err)
			res, err := h.Wait(testContext(t))
			require.NoError(t, err)
			require.Equal(t, []any{"r1", "r2", "ack1", "note", nil, true, "last words"}, res)
			require.Zero(t, rt.Stats().RepliesDropped)
		})
	}
}
