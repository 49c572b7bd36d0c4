package luaproc

// Fairness of commands answered in their handler (commandNow): such a
// call returns without a yield, but it must not let one task of a
// process, or one process, keep its step forever by calling them in a
// loop. A command call was a point where the other tasks ran (an
// answered command came back in a later step): a task polling a flag
// another task sets, through a command answered at once, must see the
// flag set.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandAnsweredAtOnceLetsSiblingsRun: a task of process.all that
// polls through an at-once command sees its sibling's flag: the sibling
// runs within a bounded number of calls, not never.
func TestCommandAnsweredAtOnceLetsSiblingsRun(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	require.NoError(t, rt.Register("app.poll", func(c Call) error {
		c.Complete(true)
		return nil
	}))
	s, err := rt.LoadString("poll.lua", `
function main()
  local done, saw = false, false
  local polls = 0
  process.all(function()
    while not done and polls < 100000 do
      app.poll()
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
