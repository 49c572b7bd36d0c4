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
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	require.NoError(t, rt.Register("app.now", func(c Call) error {
		c.Complete(c.Args[0])
		return nil
	}))
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
	rt, _, _ := newTestRuntime(t, Options{})
	require.NoError(t, rt.Register("app.now", func(c Call) error {
		c.Complete(c.Args[0])
		return nil
	}))
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
