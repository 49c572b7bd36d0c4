package luaproc

// A process waiting in a plain receive stays its own: a kill ends it and
// a message reaches it however long another process's step runs,
// including the step of the process it has just sent a message to, which
// runs nested inside its receive (scheduler/nested.go) and steps aside
// for it (luaproc/preempt.go). The first nested steps could not step
// aside, failed both tests and were reverted (BENCHMARKS.md, 2026-11-27
// afternoon); preempt_test.go covers every context the peer may loop in.

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

// captiveRun starts the caller on a runtime of the given workers, does
// act to it once the process it sent to loops, and returns how the
// caller ended (the 10 s bound only catches an act that never reached it).
func captiveRun(t *testing.T, workers int, act func(rt *Runtime, caller PID) error) ([]any, error) {
	t.Helper()
	rt, _, _ := newTestRuntime(t, Options{Workers: workers})
	_, h, _ := captiveStart(t, rt)
	require.NoError(t, act(rt, h.PID()))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "workers %d: it never reached the caller", workers)
	return res, err
}

// TestKillReachesAReceiverWhileItsPeerComputes: the caller waits in
// receive while the process it sent to loops; a kill ends the caller.
func TestKillReachesAReceiverWhileItsPeerComputes(t *testing.T) {
	for _, workers := range []int{1, 2} {
		_, err := captiveRun(t, workers, func(rt *Runtime, caller PID) error { return rt.Kill(caller, "stop") })
		require.ErrorContains(t, err, "stop")
	}
}

// TestMessageReachesAReceiverWhileItsPeerComputes: the same caller gets
// a message sent from Go while the process it sent to loops.
func TestMessageReachesAReceiverWhileItsPeerComputes(t *testing.T) {
	for _, workers := range []int{1, 2} {
		res, err := captiveRun(t, workers, func(rt *Runtime, caller PID) error { return rt.Send(caller, "hello") })
		require.NoError(t, err)
		require.Equal(t, []any{"hello"}, res)
	}
}
