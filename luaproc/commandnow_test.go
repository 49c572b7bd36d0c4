package luaproc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Go command answered in its handler returns to Lua without the
// process yielding: a thousand calls take a step or a few (one a
// maxAtOnce of them), not a thousand.
// time.sleep(0) (a yield to the others, however soon it is answered)
// still takes a step each. A command answered from a goroutine gets its
// answer either way (back from the handler's dispatch, or in the next
// step, whichever the race between the two decides).
func TestCommandAnsweredAtOnceTakesNoStep(t *testing.T) {
	rt := atOnceRuntime(t, "app.now")
	require.NoError(t, rt.Register("app.later", func(c Call) error {
		go c.Complete(c.Args[0])
		return nil
	}))
	s, err := rt.LoadString("calls.lua", `
function loop(name, n)
  local sum = 0
  for i = 1, n do
    if name == "sleep" then time.sleep(0); sum = sum + i
    else sum = sum + app[name](i) end
  end
  return sum
end`)
	require.NoError(t, err)
	steps := func(name string) uint64 {
		before := rt.SchedulerStats().Steps
		res, err := rt.Call(context.Background(), s, "loop", name, 1000)
		require.NoError(t, err)
		require.Equal(t, []any{int64(500500)}, res, name)
		return rt.SchedulerStats().Steps - before
	}
	require.LessOrEqual(t, steps("now"), uint64(1000/maxAtOnce+2), "answered at once")
	steps("later")
	require.GreaterOrEqual(t, steps("sleep"), uint64(1000), "time.sleep(0)")
}

// A command answered at once where the call could not block fails as
// one answered later does: whether it may block is decided first.
func TestCommandAnsweredAtOnceWhereItCannotBlock(t *testing.T) {
	rt := atOnceRuntime(t, "app.now")
	s, err := rt.LoadString("gsub.lua", `
function main()
  return pcall(string.gsub, "ab", "%w", function(c) return app.now(c) end)
end`)
	require.NoError(t, err)
	res, err := rt.Call(context.Background(), s, "main")
	require.NoError(t, err)
	require.Equal(t, false, res[0])
	require.Contains(t, res[1], "app.now: cannot block inside")
}

// atOnceRuntime is a runtime of one worker with command, whose handler
// answers at once with its first argument.
func atOnceRuntime(t *testing.T, command string) *Runtime {
	t.Helper()
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	require.NoError(t, rt.Register(command, func(c Call) error {
		c.Complete(c.Args[0])
		return nil
	}))
	return rt
}

// Fairness of commands answered in their handler (commandNow): such a
// call returns without a yield, but it must not let one task of a
// process, or one process, keep its step forever by calling them in a
// loop. A command call was a point where the other tasks ran (an
// answered command came back in a later step): a task polling a flag
// another task sets, through a command answered at once, must see the
// flag set.

// TestCommandAnsweredAtOnceLetsSiblingsRun: a task of process.all that
// polls through an at-once command sees its sibling's flag: the sibling
// runs within a bounded number of calls, not never.
func TestCommandAnsweredAtOnceLetsSiblingsRun(t *testing.T) {
	rt := atOnceRuntime(t, "app.poll")
	s, err := rt.LoadString("poll.lua", `
function main()
  local done, saw = false, false
  local polls = 0
  process.all(function()
    while not done and polls < 100000 do
      app.poll(true)
      polls = polls + 1
    end
    saw = done
  end, function()
    done = true
  end)
  return saw, polls
end`)
	require.NoError(t, err)
	res, err := rt.Call(context.Background(), s, "main")
	require.NoError(t, err)
	require.Equal(t, true, res[0], "the poller gave up after %v polls without its sibling running", res[1])
	require.LessOrEqual(t, res[1], int64(maxAtOnce+1), "polls before the sibling ran")
}

// The values of a command answered at once (commandNow) go through the
// calling task's argBuf, which also carries the values of its last
// resume (a command answered later): the two must not overwrite each
// other, in the task's own coroutine, a user coroutine, pcall and
// process.all's tasks.

// TestCommandAnsweredAtOnceKeepsEarlierValues: a value that came back by
// a resume stays what it was once a command answered at once reuses
// argBuf.
func TestCommandAnsweredAtOnceKeepsEarlierValues(t *testing.T) {
	rt := atOnceRuntime(t, "app.now")
	require.NoError(t, rt.Register("app.later", func(c Call) error {
		done := make(chan struct{})
		go func() { <-done; c.Complete(c.Args[0]) }()
		close(done)
		return nil
	}))
	s, err := rt.LoadString("a.lua", `
function main()
  local bad = 0
  for i = 1, 2000 do
    local a = app.later(i)
    local b = app.now(-i)
    if a ~= i or b ~= -i then bad = bad + 1 end
    local c, d = coroutine.wrap(function() local a = app.later(i); local b = app.now(-i); return a, b end)()
    if c ~= i or d ~= -i then bad = bad + 1 end
    local ok, e, f = pcall(function() local a = app.later(i); local b = app.now(-i); return a, b end)
    if e ~= i or f ~= -i then bad = bad + 1 end
    local r = {process.all(function() return app.later(i) end, function() return app.now(-i) end, function() return app.now(i * 2) end)}
    if r[1] ~= i or r[2] ~= -i or r[3] ~= 2*i then bad = bad + 1 end
  end
  return bad
end`)
	require.NoError(t, err)
	res, err := rt.Call(context.Background(), s, "main")
	require.NoError(t, err)
	require.Equal(t, []any{int64(0)}, res)
}
