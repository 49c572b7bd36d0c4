package main

// The CLI's shutdown is bounded (LUA_API.md "Hostile or broken scripts"):
// --shutdown-timeout is a hard limit even for a process stuck in a Go
// call that nothing can interrupt, and the exit status tells SIGINT (130)
// from SIGTERM (143).

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/luaproc"
)

// stuckRuntime is a runtime whose main process is inside a Go function
// that returns only when release is closed (as a Go call the interrupt
// cannot reach); it returns once the process is in it.
func stuckRuntime(t *testing.T) (rt *luaproc.Runtime, release chan struct{}) {
	t.Helper()
	var err error
	rt, err = luaproc.New(luaproc.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	inside, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, rt.RegisterGoModule("stuck", map[string]luaproc.Func{
		"forever": func([]any) ([]any, error) {
			close(inside)
			<-release
			return nil, nil
		},
	}))
	s, err := rt.LoadString("stuck.lua", "function main() stuck.forever() end")
	require.NoError(t, err)
	_, err = rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	<-inside
	return rt, release
}

// TestShutdownIsAHardLimit: shutdown returns after the grace period
// though a process never stops (it used to wait for it for ever).
func TestShutdownIsAHardLimit(t *testing.T) {
	rt, release := stuckRuntime(t)
	var stderr bytes.Buffer
	done := make(chan time.Duration, 1)
	finished := make(chan (<-chan error), 1)
	defer func() { // let the stuck worker go, and the runtime's Shutdown end
		close(release)
		<-<-finished
	}()
	go func() {
		t0 := time.Now()
		finished <- shutdown(rt, 300*time.Millisecond, &stderr)
		done <- time.Since(t0)
	}()
	select {
	case took := <-done:
		t.Logf("shutdown returned %v after it began (grace 300ms)", took)
		assert.Contains(t, stderr.String(), "did not stop within 300ms")
	case <-time.After(20 * time.Second): // only bounds a hang: it returns at 300 ms
		t.Fatal("shutdown waited for a process stuck in a Go call")
	}
}

// TestSignalStatus: SIGTERM ends luarun with 143, SIGINT with 130
// (128 + the signal's number, as a shell reports them).
func TestSignalStatus(t *testing.T) {
	for _, c := range []struct {
		sig  os.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		rt, err := luaproc.New(luaproc.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		s, err := rt.LoadString("sleep.lua", "function main() time.sleep(60) end")
		require.NoError(t, err)
		h, err := rt.Start(context.Background(), s, "main")
		require.NoError(t, err)
		sigs := make(chan os.Signal, 1)
		sigs <- c.sig
		var stderr bytes.Buffer
		status, osExit := wait(rt, h, make(chan int), sigs, 0, 5*time.Second, &stderr)
		assert.Equal(t, c.want, status, c.sig.String())
		assert.False(t, osExit)
	}
}
