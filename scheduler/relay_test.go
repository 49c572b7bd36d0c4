package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loopRelay connects schedulers in one test process, as cluster/ does
// over NATS: each node's Forward queues the message for the other's
// Send, in order, from one goroutine per node.
type loopRelay struct {
	node  int
	peers map[int]*Scheduler // set before the first send
	queue chan forwarded
	done  chan struct{}
	fail  error // Forward's error, if set
}

// forwarded is a message, or a signal when sig.Kind is set.
type forwarded struct {
	from, to PID
	msg      any
	sig      Signal
}

func newLoopRelay(node int, peers map[int]*Scheduler) *loopRelay {
	r := &loopRelay{node: node, peers: peers, queue: make(chan forwarded, 1024), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for f := range r.queue {
			s := peers[f.to.Node()]
			switch {
			case s == nil:
			case f.sig.Kind != 0:
				s.HandleSignal(f.sig)
			default:
				s.Send(f.from, f.to, f.msg)
			}
		}
	}()
	return r
}

func (r *loopRelay) Node() int { return r.node }
func (r *loopRelay) Forward(from, to PID, msg any) error {
	if err := r.reaches(to.Node()); err != nil {
		return err
	}
	r.queue <- forwarded{from: from, to: to, msg: msg}
	return nil
}
func (r *loopRelay) Signal(sig Signal) error {
	if err := r.reaches(sig.To.Node()); err != nil {
		return err
	}
	r.queue <- forwarded{to: sig.To, sig: sig}
	return nil
}

// reaches is what a send to node meets: fail, or a node not in peers.
func (r *loopRelay) reaches(node int) error {
	if r.fail != nil {
		return r.fail
	}
	if r.peers[node] == nil {
		return fmt.Errorf("node %d is not up", node)
	}
	return nil
}
func (r *loopRelay) close() { close(r.queue); <-r.done }

// TestPIDsNameTheirNode: a scheduler alone hands out PIDs 1, 2, 3...
// (node 0); one with a relay puts its node in every PID, and a PID of
// another node is no process in its table.
func TestPIDsNameTheirNode(t *testing.T) {
	alone := newSched(t, 1, nil)
	h, err := alone.Submit(newCollector(false), "main", nil)
	require.NoError(t, err)
	assert.Equal(t, 0, h.PID().Node())
	assert.Less(t, uint64(h.PID()), uint64(1000))
	require.NoError(t, alone.Send(0, h.PID(), "stop"))
	wait(t, h)

	r := newLoopRelay(MaxNode, map[int]*Scheduler{})
	defer r.close()
	s := New(Options{Workers: 1, Relay: r})
	defer s.Shutdown(context.Background())
	c := newCollector(false)
	h, err = s.Submit(c, "main", nil)
	require.NoError(t, err)
	assert.Equal(t, MaxNode, h.PID().Node())
	assert.Less(t, uint64(h.PID()), uint64(1)<<53, "a Lua number holds it exactly")
	other := NodePID(MaxNode-1, uint64(h.PID())&localMask) // the same count, another node
	_, found := s.Lookup(other)
	assert.False(t, found)
	assert.ErrorContains(t, s.Kill(other, nil), "not up", "a kill goes to the relay")
	require.NoError(t, s.Send(0, h.PID(), "hello"))
	assert.Equal(t, "hello", next(t, c).Data)
	require.NoError(t, s.Send(0, h.PID(), "stop"))
	wait(t, h)
}

// twoNodes starts schedulers of nodes 1 and 2 joined by loop relays,
// shut down when the test ends.
func twoNodes(t *testing.T) (a, b *Scheduler) {
	peers := map[int]*Scheduler{}
	ra, rb := newLoopRelay(1, peers), newLoopRelay(2, peers)
	a, b = New(Options{Workers: 2, Relay: ra}), New(Options{Workers: 2, Relay: rb})
	peers[1], peers[2] = a, b
	t.Cleanup(func() {
		for _, s := range []*Scheduler{a, b} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			assert.NoError(t, s.Shutdown(ctx))
			cancel()
		}
		ra.close()
		rb.close()
	})
	return a, b
}

// TestSendsCrossNodesInOrder: two schedulers joined by relays pass
// messages both ways; the messages between a pair arrive in the order
// they were sent, and each side counts what it forwarded.
func TestSendsCrossNodesInOrder(t *testing.T) {
	a, b := twoNodes(t)
	n := 10000
	if raceEnabled {
		n = 1000 // each push may yield (mpsc/hook_race.go): 10,000 take a minute on one CPU
	}
	var got []any
	var mu sync.Mutex
	done := make(chan struct{})
	sink := &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type != EventMessage {
				continue
			}
			mu.Lock()
			got = append(got, ev.Data)
			mu.Unlock()
			if ev.Data == int64(n) {
				close(done)
				out.Status = StatusDone
				return nil
			}
		}
		out.Status = StatusReceive
		return nil
	}}
	hs, err := b.Submit(sink, "main", nil)
	require.NoError(t, err)
	sender := &fnProc{step: func(evs []Event, out *StepOutput) error {
		for i := int64(1); i <= int64(n); i++ {
			if err := out.Send(hs.PID(), i); err != nil {
				return err
			}
		}
		out.Status = StatusDone
		return nil
	}}
	h, err := a.Submit(sender, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the messages did not all come")
	}
	wait(t, hs)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, n)
	for i, v := range got {
		require.Equal(t, int64(i+1), v, "message %d", i)
	}
	assert.Equal(t, 2, hs.PID().Node())
	assert.Equal(t, uint64(n), a.Stats().Forwarded)
	assert.Equal(t, uint64(0), b.Stats().Forwarded)
}

// TestForwardErrors: a relay's refusal is the sender's error, naming the
// node; without a relay a PID of another node is no process.
func TestForwardErrors(t *testing.T) {
	r := newLoopRelay(1, map[int]*Scheduler{})
	defer r.close()
	r.fail = errors.New("node 7 is not in the cluster")
	s := New(Options{Workers: 1, Relay: r})
	defer s.Shutdown(context.Background())
	err := s.Send(0, NodePID(7, 1), "x")
	assert.ErrorContains(t, err, "on node 7: node 7 is not in the cluster")
	assert.Equal(t, uint64(0), s.Stats().Forwarded)

	alone := newSched(t, 1, nil)
	assert.ErrorIs(t, alone.Send(0, NodePID(7, 1), "x"), ErrNoProcess)
}
