package commands

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// TestPanicOnIOGoroutineFailsTheCall: a panic in a call's I/O, on an IO
// goroutine, fails that call with a *scheduler.PanicError (as a panic in
// a handler does) and is reported to OnPanic with its stack; the program
// goes on, and so does the goroutine pool. Before, such a panic ended
// the program (no goroutine of the pool recovered).
func TestPanicOnIOGoroutineFailsTheCall(t *testing.T) {
	reg := new(scheduler.Registry)
	Register(reg)
	o := NewIO()
	o.Register(reg)
	reported := make(chan *scheduler.PanicError, 1)
	o.OnPanic = func(pe *scheduler.PanicError) { reported <- pe }
	reg.Register("test.explode", func(c scheduler.Call) error {
		o.startCall(c, func() { panic("exploded") })
		return nil
	})
	s := scheduler.New(scheduler.Options{Workers: 2, Dispatcher: reg})
	t.Cleanup(func() { shutdown(t, s); require.NoError(t, o.Close(context.Background())) })
	h, _ := call(t, s, "test.explode")
	_, err := result(h)
	var pe *scheduler.PanicError
	require.True(t, errors.As(err, &pe), "got %v", err)
	assert.Equal(t, "panic in command test.explode: exploded", pe.Error())
	got := <-reported
	assert.Contains(t, string(got.Stack), "commands.TestPanicOnIOGoroutineFailsTheCall")
	h, _ = call(t, s, "time.sleep", 0.0) // the runtime goes on
	_, err = result(h)
	assert.NoError(t, err)
}
