package luaproc

// A process waiting in a plain receive stays its own: a kill ends it and
// a message reaches it however long another process's step runs,
// including the step of the process it has just sent a message to. (Nested
// steps, which ran that step inside the caller's receive, failed both
// tests and were reverted: see BENCHMARKS.md, 2026-11-27 afternoon.)

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const captiveLua = `
function busy(to)
  process.send(to, process.self())
  local m = process.receive()
  process.send(to, "busy")
  local x = 0
  while true do x = x + 1 end -- a long step: no MaxStep here
end
function caller(to)
  local q = process.spawn("busy", to)
  process.receive() -- the test's go-ahead: q waits in receive
  process.send(q, "go")
  local m = process.receive()
  return m
end`

// captiveStart starts caller, and returns it and the busy process once
// the busy one runs its loop.
func captiveStart(t *testing.T, rt *Runtime) (*Inbox, Handle, PID) {
	t.Helper()
	s, err := rt.LoadString("captive.lua", captiveLua)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	t.Cleanup(func() { _ = inbox.Close() })
	h, err := rt.Start(context.Background(), s, "caller", int64(inbox.PID()))
	require.NoError(t, err)
	msg, err := inbox.Receive(testContext(t)) // q waits in receive
	require.NoError(t, err)
	busy := PID(msg.Value.(int64))
	require.NoError(t, rt.Send(h.PID(), "start"))
	msg, err = inbox.Receive(testContext(t))
	require.NoError(t, err)
	require.Equal(t, "busy", msg.Value)
	t.Cleanup(func() { _ = rt.Kill(busy, "test over") })
	return inbox, h, busy
}

// TestKillReachesAReceiverWhileItsPeerComputes: the caller waits in
// receive while the process it sent to loops; a kill ends the caller
// (the bound only catches a kill not seen at all).
func TestKillReachesAReceiverWhileItsPeerComputes(t *testing.T) {
	for _, workers := range []int{1, 2} {
		rt, _, _ := newTestRuntime(t, Options{Workers: workers})
		_, h, _ := captiveStart(t, rt)
		require.NoError(t, rt.Kill(h.PID(), "stop"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := h.Wait(ctx)
		cancel()
		require.NotErrorIs(t, err, context.DeadlineExceeded, "workers %d: the kill never reached the caller", workers)
		require.ErrorContains(t, err, "stop")
	}
}

// TestMessageReachesAReceiverWhileItsPeerComputes: the same caller gets
// a message sent from Go while the process it sent to loops.
func TestMessageReachesAReceiverWhileItsPeerComputes(t *testing.T) {
	for _, workers := range []int{1, 2} {
		rt, _, _ := newTestRuntime(t, Options{Workers: workers})
		_, h, _ := captiveStart(t, rt)
		require.NoError(t, rt.Send(h.PID(), "hello"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := h.Wait(ctx)
		cancel()
		require.NotErrorIs(t, err, context.DeadlineExceeded, "workers %d: the message never reached the caller", workers)
		require.NoError(t, err)
		require.Equal(t, "hello", res[0])
	}
}
