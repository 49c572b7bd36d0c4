package scheduler

// Remote recipients of an end's notices (endNotices): signalled after
// every local notice is readable. From a review of the first endNotices,
// which signalled them from place, between the local reservations and
// their commit.

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gateRelay is a Relay whose Signal blocks until gate is closed, as the
// cluster's outbound does when maxPending bytes wait (batches.go:
// o.room.Wait), or as loopRelay does when its channel is full.
type gateRelay struct {
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
	react   func(Signal) // called in Signal before blocking (a fast remote)
}

func (r *gateRelay) Node() int                           { return 1 }
func (r *gateRelay) Forward(from, to PID, msg any) error { return nil }
func (r *gateRelay) Signal(sig Signal) error {
	if r.react != nil {
		r.react(sig)
	}
	if sig.Kind == SignalExit || sig.Kind == SignalDown {
		r.once.Do(func() { close(r.entered) })
		<-r.gate
	}
	return nil
}

// TestEndNoticeHeldByRemoteSignal: P is watched by a local process L and
// linked to a process on node 2, and the relay's Signal blocks (as the
// cluster's outbound does when its queue is full). L's down is readable
// while Signal blocks: no local notice waits on a remote one. (Signalled
// from place, the down stayed reserved behind the blocked Signal: L
// could not read it, nor be killed, and spun on its broken chain.)
func TestEndNoticeHeldByRemoteSignal(t *testing.T) {
	r := &gateRelay{entered: make(chan struct{}), gate: make(chan struct{})}
	s := New(Options{Workers: 2, Relay: r})
	defer func() {
		close(r.gate)
		_ = s.Shutdown(t.Context())
	}()
	gotDown := make(chan struct{})
	var downOnce sync.Once
	watcher := &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventDown {
				downOnce.Do(func() { close(gotDown) })
			}
			if ev.Type == EventCancel {
				return ev.Error // killed: Shutdown waits for it
			}
		}
		out.Status = StatusReceive
		return nil
	}}
	hl, err := s.Submit(watcher, "", nil)
	require.NoError(t, err)
	ender := newEnder()
	he, _, err := s.SubmitWith(ender, "", nil, SubmitOptions{Monitor: hl.PID()})
	require.NoError(t, err)
	// A process of node 2 links to P (as the relay would hand it over).
	s.HandleSignal(Signal{Kind: SignalLink, From: NodePID(2, 5), To: he.PID()})
	require.NoError(t, s.Send(0, he.PID(), "end"))
	<-r.entered // the exit's Signal is blocked
	select {
	case <-gotDown:
	case <-time.After(time.Minute): // a generous bound: the down is readable before Signal is called
		t.Fatal("L's down was not readable while Relay.Signal to another node blocked")
	}
	require.NoError(t, s.Kill(hl.PID(), nil))
}

// TestEndNoticeRemoteReactsFirst: a remote watcher that reacts at once
// (here synchronously in Signal) to tell a local linked process finds
// that process's exit already readable ahead of its message.
func TestEndNoticeRemoteReactsFirst(t *testing.T) {
	remote := NodePID(2, 5)
	var s *Scheduler
	var linkedPID atomic.Uint64
	r := &gateRelay{entered: make(chan struct{}), gate: make(chan struct{})}
	close(r.gate)
	r.react = func(sig Signal) {
		if sig.Kind == SignalDown && sig.To == remote {
			_ = s.Send(remote, PID(linkedPID.Load()), "told") // the remote watcher tells L
		}
	}
	s = New(Options{Workers: 2, Relay: r})
	defer func() { _ = s.Shutdown(t.Context()) }()

	heard := make(chan []string, 1)
	linked := newRelay(heard, nil, EventExit)
	hl, err := s.Submit(linked, "", nil)
	require.NoError(t, err)
	linkedPID.Store(uint64(hl.PID()))
	ender := newEnder()
	he, err := s.Submit(ender, "", nil)
	require.NoError(t, err)
	s.HandleSignal(Signal{Kind: SignalMonitor, From: remote, To: he.PID(), Ref: 77}) // a watcher on node 2
	require.NoError(t, s.Link(hl.PID(), he.PID()))
	require.NoError(t, s.Send(0, he.PID(), "end"))
	select {
	case g := <-heard:
		require.Equal(t, []string{"notice", "told"}, g, "the remote watcher's reaction overtook the local exit")
	case <-time.After(time.Minute):
		t.Fatal("the linked process never heard both")
	}
}
