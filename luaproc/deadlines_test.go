package luaproc

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// TestDeadlinesArmFewTimers: a process's receive and call timeouts share
// timers (deadlines.go). 1,000 calls and 1,000 receives with a timeout,
// each answered at once, arm one timer; a shorter timeout after them
// arms its own and still ends on time; waits with different timeouts at
// once end in the order of their deadlines, none early.
func TestDeadlinesArmFewTimers(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	var sleeps atomic.Int64
	rt.reg.Register(deadlineCommand, func(c scheduler.Call) error {
		sleeps.Add(1)
		return armDeadline(c)
	})
	res, err := runLua(t, rt, "deadlines.lua", `
function echo()
  while true do
    local m, _, kind, call = process.receive()
    if kind == "call" then process.reply(call, m) end
  end
end
function main()
  local s = process.spawn("echo")
  for i = 1, 1000 do assert(process.call(s, i) == i) end          -- 5 s timeouts
  for i = 1, 1000 do
    process.send(process.self(), i)
    assert(process.receive(10) == i)                              -- later: no timer
  end
  local t0 = time.monotonic()
  local m, err = process.receive(0.02)                            -- earlier: a timer
  local waited = time.monotonic() - t0
  -- three at once, ending in the order of their deadlines
  local function wait_for(timeout)
    return function()
      local _, err = process.receive({match = function() return false end, timeout = timeout})
      assert(err == "timeout")
      return time.monotonic() - t0
    end
  end
  t0 = time.monotonic()
  local a, b, c = process.all(wait_for(0.03), wait_for(0.01), wait_for(0.02))
  process.kill(s)
  return m, err, waited, a, b, c
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 6)
	assert.Equal(t, payload.Payloads{nil, "timeout"}, res[:2])
	assert.GreaterOrEqual(t, res[2].(float64), 0.02, "receive(0.02) ended early")
	a, b, c := res[3].(float64), res[4].(float64), res[5].(float64)
	assert.GreaterOrEqual(t, b, 0.01)
	assert.GreaterOrEqual(t, c, 0.02)
	assert.GreaterOrEqual(t, a, 0.03)
	assert.LessOrEqual(t, b, c)
	assert.LessOrEqual(t, c, a)
	// 1 for the calls (the receive(10)s fall after it); 1 for
	// receive(0.02), earlier than that; 1 to 3 for the three at once
	// (one each at most, fewer when one fires late enough to cover the
	// next).
	n := sleeps.Load()
	assert.GreaterOrEqual(t, n, int64(3))
	assert.LessOrEqual(t, n, int64(5), "timers armed")
}

// TestDeadlineTimersStopAtEnd: a process that ends while a timer of its
// call's timeout is armed stops it. Before, the timer stayed in the Go
// runtime's heap for the whole timeout and then fired for a process that
// was gone (a dropped completion): one per http.serve request that asked
// a store process.
func TestDeadlineTimersStopAtEnd(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "stop.lua", `
function echo()
  while true do
    local m, _, kind, call = process.receive()
    if kind == "call" then process.reply(call, m) end
  end
end
function caller(s)
  return process.call(s, "x", 0.05) -- answered at once; its timer is armed for 50 ms
end
function main()
  local s = process.spawn("echo")
  local callers = {}
  for i = 1, 20 do callers[i] = process.spawn("caller", s) end
  for i = 1, 20 do assert(select(2, process.wait(callers[i])) == "x") end
  -- a sleep armed after the callers' timers fires after they would have
  time.sleep(0.2)
  process.kill(s)
  return true
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true}, res)
	assert.Zero(t, rt.Stats().CompletionsDropped, "timers of ended processes fired")
}
