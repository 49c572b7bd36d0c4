package luaproc

// The worker's one recover (scheduler/worker.go catchStep): a Go panic in a built-in ends only its process, with an internal error
// and a crash report carrying the panicking stack, also when the step
// runs on the caller's goroutine (Runtime.Call: a homed run).

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoPanicInCallIsInternalError: Runtime.Call runs the steps on its
// own goroutine; a built-in's panic there ends that process with an
// internal error (Call returns it, the caller's goroutine goes on), the
// crash report has the writer's frame, and the next Call prints.
func TestGoPanicInCallIsInternalError(t *testing.T) {
	out := &panicWriter{}
	rt, _, logs := newTestRuntime(t, Options{Stdout: out})
	s, err := rt.LoadString("c.lua", `
function boom() local ok = pcall(print, "boom") print("went on", ok) return "went on" end
function fine() print("fine") return 1 end`)
	require.NoError(t, err)
	for range 3 { // past the inline workers a scheduler makes per worker
		_, err = rt.Call(context.Background(), s, "boom")
		require.Error(t, err)
		assert.Equal(t, "internal error: writer exploded", err.Error())
	}
	assert.Contains(t, logs.String(), "luaproc.(*panicWriter).Write", "the crash report has the Go stack")
	res, err := rt.Call(context.Background(), s, "fine")
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1)}, res)
	assert.Equal(t, "fine\n", out.String())
	assert.EqualValues(t, 4, rt.SchedulerStats().Inline, "every Call ran on its caller")
}
