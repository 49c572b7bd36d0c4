package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// start submits a collector to s and returns it with its handle.
func start(t *testing.T, s *Scheduler, traps bool) (*collector, Handle) {
	t.Helper()
	c := newCollector(traps)
	h, err := s.Submit(c, "", nil)
	require.NoError(t, err)
	return c, h
}

// TestRemoteMonitor: a monitor of a process on another node gets its
// messages and then one down with its reason; a monitor of a remote PID
// that is no process gets noproc; a demonitored one gets nothing; the
// references of two nodes differ.
func TestRemoteMonitor(t *testing.T) {
	a, b := twoNodes(t)
	w, hw := start(t, a, false)
	_, hb := start(t, b, false)
	ref := a.Monitor(hw.PID(), hb.PID())
	assert.Equal(t, 1, PID(ref).Node(), "a reference carries its node")
	for i := range 50 { // b's messages to w, then its failure
		require.NoError(t, b.Send(hb.PID(), hw.PID(), i))
	}
	require.NoError(t, a.Send(0, hb.PID(), "fail")) // behind the monitor's signal
	for i := range 50 {
		require.Equal(t, i, next(t, w).Data)
	}
	down := next(t, w)
	require.Equal(t, EventDown, down.Type)
	assert.Equal(t, ref, down.Tag)
	assert.Equal(t, hb.PID(), down.From)
	assert.EqualError(t, down.Error, "failed on purpose")

	ref = a.Monitor(hw.PID(), hb.PID()) // ended now
	down = next(t, w)
	assert.Equal(t, ref, down.Tag)
	assert.ErrorIs(t, down.Error, ErrNoProcess)

	_, hq := start(t, b, false)
	ref = a.Monitor(hw.PID(), hq.PID())
	a.Demonitor(hq.PID(), ref)
	require.NoError(t, b.Send(0, hq.PID(), "stop"))
	wait(t, hq)
	require.NoError(t, b.Send(hq.PID(), hw.PID(), "after")) // behind any down on the same path
	assert.Equal(t, "after", next(t, w).Data, "no down for the demonitored process")
	require.NoError(t, a.Send(0, hw.PID(), "stop"))
}

// TestRemoteLink: a link across nodes brings the exit to a process that
// traps exits and ends one that does not; a link to a remote PID that is
// no process is an exit with noproc at once; after an unlink, nothing.
func TestRemoteLink(t *testing.T) {
	a, b := twoNodes(t)
	trapper, ht := start(t, a, true)
	_, hb := start(t, b, false)
	require.NoError(t, a.Link(ht.PID(), hb.PID()))
	_, hd := start(t, a, false) // dies with hb
	require.NoError(t, a.Link(hd.PID(), hb.PID()))
	require.NoError(t, a.Send(ht.PID(), hb.PID(), "fail")) // behind the link signals
	ev := next(t, trapper)
	require.Equal(t, EventExit, ev.Type)
	assert.Equal(t, hb.PID(), ev.From)
	assert.EqualError(t, ev.Error, "failed on purpose")
	_, err := wait(t, hd)
	assert.EqualError(t, err, "failed on purpose", "the linked process died with it")

	require.NoError(t, a.Link(ht.PID(), hb.PID())) // ended
	ev = next(t, trapper)
	assert.Equal(t, EventExit, ev.Type)
	assert.ErrorIs(t, ev.Error, ErrNoProcess)

	_, hu := start(t, b, false)
	require.NoError(t, b.Link(hu.PID(), ht.PID())) // from the other side
	b.Unlink(hu.PID(), ht.PID())
	require.NoError(t, b.Send(0, hu.PID(), "fail")) // the unlink left before its exit
	wait(t, hu)
	require.NoError(t, b.Send(hu.PID(), ht.PID(), "after"))
	assert.Equal(t, "after", next(t, trapper).Data, "no exit after the unlink")
	require.NoError(t, a.Send(0, ht.PID(), "stop"))
}

// TestRemoteKill: a kill crosses with its reason; a kill of a node that
// is not reachable is an error.
func TestRemoteKill(t *testing.T) {
	a, b := twoNodes(t)
	_, hb := start(t, b, false)
	require.NoError(t, a.Kill(hb.PID(), errors.New("told to")))
	_, err := wait(t, hb)
	assert.EqualError(t, err, "told to")
	assert.EqualValues(t, 1, b.Stats().Killed)
	assert.ErrorContains(t, a.Kill(NodePID(9, 1), nil), "node 9")
}

// TestNodeDownFiresOnce: when a node goes away, the monitors and links of
// this node's processes on its processes fire with noconnection, once: a
// down or exit the node sends later finds nothing to fire.
func TestNodeDownFiresOnce(t *testing.T) {
	a, b := twoNodes(t)
	w, hw := start(t, a, true)
	_, hb := start(t, b, false)
	ref := a.Monitor(hw.PID(), hb.PID())
	require.NoError(t, a.Link(hw.PID(), hb.PID()))
	require.NoError(t, b.Send(hb.PID(), hw.PID(), "linked")) // the link signal went first
	require.Equal(t, "linked", next(t, w).Data)
	a.NodeDown(2)
	got := map[EventType]Event{}
	for range 2 {
		ev := next(t, w)
		got[ev.Type] = ev
	}
	assert.ErrorIs(t, got[EventDown].Error, ErrNoConnection)
	assert.Equal(t, ref, got[EventDown].Tag)
	assert.ErrorIs(t, got[EventExit].Error, ErrNoConnection)
	assert.Equal(t, hb.PID(), got[EventExit].From)

	require.NoError(t, b.Send(0, hb.PID(), "fail")) // its down and exit come, and are dropped
	wait(t, hb)
	require.NoError(t, b.Send(hb.PID(), hw.PID(), "after"))
	assert.Equal(t, "after", next(t, w).Data, "nothing fired twice")

	require.NoError(t, a.Send(0, hw.PID(), "stop"))
}

// TestUnreachableNodeFiresAtOnce: a monitor or link of a process on a
// node the relay cannot reach fires at once with noconnection.
func TestUnreachableNodeFiresAtOnce(t *testing.T) {
	r := newLoopRelay(1, map[int]*Scheduler{})
	defer r.close()
	r.fail = errors.New("node 2 is not up")
	s := New(Options{Workers: 1, Relay: r})
	defer s.Shutdown(t.Context())
	w, hw := start(t, s, true)
	ref := s.Monitor(hw.PID(), NodePID(2, 5))
	down := next(t, w)
	assert.Equal(t, ref, down.Tag)
	assert.ErrorIs(t, down.Error, ErrNoConnection)
	require.NoError(t, s.Link(hw.PID(), NodePID(2, 5)))
	exit := next(t, w)
	assert.Equal(t, EventExit, exit.Type)
	assert.ErrorIs(t, exit.Error, ErrNoConnection)
	require.NoError(t, s.Send(0, hw.PID(), "stop"))
}
