package luaproc

// The values of a command answered at once (commandNow) go through the
// calling task's argBuf, which also carries the values of its last
// resume (a command answered later): the two must not overwrite each
// other, in the task's own coroutine, a user coroutine, pcall and
// process.all's tasks.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCommandAnsweredAtOnceKeepsEarlierValues: a value that came back by
// a resume stays what it was once a command answered at once reuses
// argBuf.
func TestCommandAnsweredAtOnceKeepsEarlierValues(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	require.NoError(t, rt.Register("app.now", func(c Call) error { c.Complete(c.Args[0]); return nil }))
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
