package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestProcContextLazy(t *testing.T) {
	reason := errors.New("killed for a reason")

	// Cancelled before anything looked at it.
	var early procContext
	early.pid = 7
	early.cancel(reason)
	early.cancel(errors.New("second cause loses"))
	require.Nil(t, early.ctx.real.Load(), "no context is made until something asks")
	require.Equal(t, PID(7), PIDFrom(&early))
	<-early.Done()
	require.ErrorIs(t, early.Err(), context.Canceled)
	require.Same(t, reason, context.Cause(&early))

	// Used, then cancelled: children and AfterFunc follow, with the cause.
	var late procContext
	child, stop := context.WithTimeout(&late, time.Hour)
	defer stop()
	fired := make(chan struct{})
	context.AfterFunc(&late, func() { close(fired) })
	require.NoError(t, late.Err())
	late.cancel(reason)
	<-child.Done()
	<-fired
	require.Same(t, reason, context.Cause(child))
	_, has := late.Deadline()
	require.False(t, has)
}

// TestProcContextErrIsLazy: Err answers without making the real context
// (a process's end asks it of every process), before and after a cancel.
func TestProcContextErrIsLazy(t *testing.T) {
	var c procContext
	require.NoError(t, c.Err())
	require.Nil(t, c.ctx.real.Load(), "Err made the context")
	c.cancel(errors.New("gone"))
	require.ErrorIs(t, c.Err(), context.Canceled)
	require.Nil(t, c.ctx.real.Load(), "Err made the context")
}

// PIDFrom reads a process's context without boxing its PID (a PID past
// 255 would be an allocation through Value); a context below it still
// answers through Value.
func TestPIDFromProcContextAllocs(t *testing.T) {
	c := &procContext{pid: 1 << 40}
	var got PID
	allocs := testing.AllocsPerRun(100, func() { got = PIDFrom(c) })
	require.Equal(t, PID(1<<40), got)
	require.Zero(t, allocs)
	child, cancel := context.WithCancel(c)
	defer cancel()
	require.Equal(t, PID(1<<40), PIDFrom(child))
}

// TestProcContextValueIsLazy: a value of the parent context (Call.Ctx's
// request-scoped values) is answered without making the real context;
// context.Cause, whose key is the context package's own, still finds the
// cause through it.
func TestProcContextValueIsLazy(t *testing.T) {
	type key struct{}
	c := &procContext{pid: 3, ctx: ctxState{values: context.WithValue(context.Background(), key{}, "request 9")}}
	require.Equal(t, "request 9", c.Value(key{}))
	require.Nil(t, c.Value("absent"))
	require.Equal(t, PID(3), PIDFrom(c))
	require.Nil(t, c.ctx.real.Load(), "Value made the context")
	var none procContext
	require.Nil(t, none.Value(key{}))
	require.Nil(t, none.ctx.real.Load(), "Value made the context")

	reason := errors.New("gone")
	c.cancel(reason)
	require.Same(t, reason, context.Cause(c))
	require.Equal(t, "request 9", c.Value(key{}))
	child, cancel := context.WithCancel(c)
	defer cancel()
	<-child.Done()
	require.Equal(t, "request 9", child.Value(key{}))
}
