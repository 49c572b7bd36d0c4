package luaproc

// Start's context: its values reach the process's commands, its end
// kills the process with its cause, and a process that ends first leaves
// nothing registered on it.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

type requestKey struct{}

// TestStartContextCancelKills: cancelling Start's context kills the
// process, whether it waits in process.receive or spins in a loop, with a
// *KilledError carrying the context's cause.
func TestStartContextCancelKills(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	for name, src := range map[string]string{
		"receiving": `process.send(process.args[1], "ready") process.receive()`,
		"spinning":  `process.send(process.args[1], "ready") while true do end`,
	} {
		t.Run(name, func(t *testing.T) {
			s, err := rt.LoadString(name+".lua", "process.args = {...}\nfunction main(inbox) "+src+" end")
			require.NoError(t, err)
			inbox, err := rt.NewInbox()
			require.NoError(t, err)
			defer inbox.Close()
			ctx, cancel := context.WithCancelCause(context.Background())
			h, err := rt.Start(ctx, s, "main", int64(inbox.PID()))
			require.NoError(t, err)
			wait, stop := context.WithTimeout(context.Background(), time.Minute)
			defer stop()
			_, err = inbox.Receive(wait) // it runs: the kill is not a refusal to start
			require.NoError(t, err)
			gone := errors.New("the client went away")
			cancel(gone)
			_, err = h.Wait(wait)
			require.NotErrorIs(t, err, context.DeadlineExceeded, "the process was not killed")
			var ke *KilledError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, "killed: the client went away", err.Error())
			assert.ErrorIs(t, err, gone)
		})
	}
}

// TestStartContextDoneAlready: a context done before Start starts
// nothing; Start returns its cause.
func TestStartContextDoneAlready(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("late.lua", "return 1")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	submitted := rt.Stats().Started
	_, err = rt.Start(ctx, s, "")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "start late.lua: context canceled", err.Error())
	assert.Equal(t, submitted, rt.Stats().Started)
	_, err = rt.Start(nil, s, "") //nolint:staticcheck // the nil context is the point
	require.EqualError(t, err, "start late.lua: nil context")
}

// TestStartContextValuesReachCommands: a value set in Start's context is
// in the context of the process's command calls (a handler answering at
// once, and one answering from another goroutine), and the context is
// still the process's own: it is done when the process is killed.
func TestStartContextValuesReachCommands(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	require.NoError(t, rt.Register("req.id", func(c Call) error {
		id, _ := c.Ctx.Value(requestKey{}).(string)
		c.Complete(id, int64(scheduler.PIDFrom(c.Ctx)) == int64(c.PID))
		return nil
	}))
	ctxDone := make(chan error, 1)
	require.NoError(t, rt.Register("req.later", func(c Call) error {
		go func() {
			id, _ := c.Ctx.Value(requestKey{}).(string)
			c.Complete(id)
			<-c.Ctx.Done()
			ctxDone <- context.Cause(c.Ctx)
		}()
		return nil
	}))
	s, err := rt.LoadString("req.lua", `function main() local id, own = req.id() return id, own, req.later() end`)
	require.NoError(t, err)
	ctx := context.WithValue(context.Background(), requestKey{}, "req-42")
	h, err := rt.Start(ctx, s, "main")
	require.NoError(t, err)
	wait, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	res, err := h.Wait(wait)
	require.NoError(t, err)
	assert.Equal(t, []any{"req-42", true, "req-42"}, res)
	select {
	case <-ctxDone: // the command's context ends with the process
	case <-wait.Done():
		t.Fatal("the command's context outlived its process")
	}
}

// countingContext is a context that can be cancelled (its Done channel
// is not nil) but never is, and counts the callbacks context.AfterFunc
// has registered on it and not yet stopped (context.AfterFunc uses a
// parent's own AfterFunc method when the parent is not one of package
// context's cancel contexts).
type countingContext struct {
	context.Context // Background: values, deadline, Err
	done            chan struct{}
	mu              sync.Mutex
	live            int
	fns             map[int]func()
	next            int
}

func (c *countingContext) Done() <-chan struct{} { return c.done }

func (c *countingContext) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fns == nil {
		c.fns = map[int]func(){}
	}
	id := c.next
	c.next++
	c.fns[id] = f
	c.live++
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, ok := c.fns[id]; !ok {
			return false
		}
		delete(c.fns, id)
		c.live--
		return true
	}
}

// TestStartContextReleasedAtEnd: a process that ends before its context
// does leaves no callback on it, so a long-lived context (a server's)
// does not collect one per process it started.
func TestStartContextReleasedAtEnd(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	ctx := &countingContext{Context: context.Background(), done: make(chan struct{})}
	s, err := rt.LoadString("quick.lua", "return 1")
	require.NoError(t, err)
	wait, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	var ended atomic.Int64
	for range 100 {
		h, err := rt.Start(ctx, s, "")
		require.NoError(t, err)
		_, err = h.Wait(wait)
		require.NoError(t, err)
		ended.Add(1)
	}
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	assert.Equal(t, 100, ctx.next, "a callback per process")
	assert.Equal(t, 0, ctx.live, "callbacks left after %d processes ended", ended.Load())
}
