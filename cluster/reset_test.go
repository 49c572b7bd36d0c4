package cluster

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// exitWatcher is a process that passes on the exits and downs it gets.
type exitWatcher struct{ exits chan scheduler.Event }

func (w *exitWatcher) Init(context.Context, string, payload.Payloads) error { return nil }
func (w *exitWatcher) Close()                                               {}
func (w *exitWatcher) Step(evs []scheduler.Event, out *scheduler.StepOutput) error {
	for _, ev := range evs {
		switch ev.Type {
		case scheduler.EventCancel:
			return ev.Error
		case scheduler.EventExit, scheduler.EventDown:
			w.exits <- ev
		}
	}
	out.Status = scheduler.StatusReceive
	return nil
}

// linkedPair links a watcher on b with a watcher on a, and waits until
// a has made its half.
func linkedPair(t *testing.T, a, b joined) (onA, onB *exitWatcher, pa, pb scheduler.PID) {
	t.Helper()
	onA, onB = &exitWatcher{make(chan scheduler.Event, 4)}, &exitWatcher{make(chan scheduler.Event, 4)}
	ha, err := a.sched.Submit(onA, "main", nil)
	require.NoError(t, err)
	hb, err := b.sched.Submit(onB, "main", nil)
	require.NoError(t, err)
	signalled(t, a, func() {
		require.NoError(t, b.sched.Link(hb.PID(), ha.PID()))
	})
	return onA, onB, ha.PID(), hb.PID()
}

// exitOf waits for w's next exit, which must be from's with noconnection.
func exitOf(t *testing.T, w *exitWatcher, from scheduler.PID) {
	t.Helper()
	select {
	case ev := <-w.exits:
		assert.Equal(t, from, ev.From)
		assert.ErrorIs(t, ev.Error, scheduler.ErrNoConnection)
	case <-time.After(time.Minute):
		t.Fatal("no exit came")
	}
}

// TestOneSidedDownEndsBothHalves: a node that found another silent
// (noticeDown) fired its halves of their links; when the other beats
// again — it had never seen this one go quiet — it is reset and fires
// its halves too: no link is left with one end.
func TestOneSidedDownEndsBothHalves(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	onA, onB, pa, pb := linkedPair(t, a, b)

	// a finds b silent, though b beats on (b's beats fall between a's
	// looks: try until one look catches it)
	for got := false; !got; {
		a.node.mu.Lock()
		a.node.peers[b.node.Node()].seen = time.Time{}
		a.node.mu.Unlock()
		a.node.noticeDown()
		select {
		case ev := <-onA.exits:
			assert.Equal(t, pb, ev.From)
			assert.ErrorIs(t, ev.Error, scheduler.ErrNoConnection)
			got = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	exitOf(t, onB, pa) // b's half, once a heard b again and reset it
	waitAck(t, a, b)
}

// TestLostFramesEndBothHalves: frames from a node that never came (a gap
// in its numbers) may have been a link's or a monitor's signals: the
// node that sees the gap fires its halves and resets the other, which
// fires its own.
func TestLostFramesEndBothHalves(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	onA, onB, pa, pb := linkedPair(t, a, b)

	a.node.out.mu.Lock()
	a.node.out.dest(b.node.Node()).seq += 3 // three frames lost on the way
	a.node.out.mu.Unlock()
	require.NoError(t, a.sched.Send(0, pb, "after the gap"))
	exitOf(t, onB, pa) // b saw the gap
	exitOf(t, onA, pb) // a read b's reset
	assert.Equal(t, uint64(3), b.node.Stats().Lost)
	waitAck(t, b, a)

	// the nodes go on: a new link between the same processes holds
	signalled(t, a, func() {
		require.NoError(t, b.sched.Link(pb, pa))
	})
	a.sched.Kill(pa, scheduler.ErrShutdown)
	select {
	case ev := <-onB.exits:
		assert.Equal(t, pa, ev.From)
		assert.NotErrorIs(t, ev.Error, scheduler.ErrNoConnection)
	case <-time.After(time.Minute):
		t.Fatal("no exit came")
	}
}

// waitAck waits until from's reset of to was answered.
func waitAck(t *testing.T, from, to joined) {
	t.Helper()
	eventually(t, "the reset was answered", func() bool {
		from.node.mu.RLock()
		defer from.node.mu.RUnlock()
		return !from.node.peers[to.node.Node()].refusing()
	})
}

// signalled runs do, which sends on's node a monitor or link request,
// and waits until on has carried it out.
func signalled(t *testing.T, on joined, do func()) {
	t.Helper()
	before := on.node.Stats().Signals
	do()
	eventually(t, "the request was carried out", func() bool { return on.node.Stats().Signals > before })
}

// eventually waits until cond holds; a minute without is a failure, not
// a race (each wait here takes milliseconds).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// TestNameTakenOverWhileSilent: a node that found another silent takes
// over a name its process held; when it hears that node again and
// resets it, that node lets go of the name: one holder in the cluster.
func TestNameTakenOverWhileSilent(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	ha, err := a.sched.Submit(&sink{last: "never", done: make(chan struct{})}, "main", nil)
	require.NoError(t, err)
	hb, err := b.sched.Submit(&sink{last: "never", done: make(chan struct{})}, "main", nil)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, a.sched.Register("svc", ha.PID()))
	require.NoError(t, a.node.Register(ctx, "svc", ha.PID()))
	require.NoError(t, b.sched.Register("svc", hb.PID()))

	// b finds a silent (a beats on: try until b's claim falls in the
	// moment before it hears a again)
	for {
		b.node.mu.Lock()
		b.node.peers[a.node.Node()].seen = time.Time{}
		b.node.mu.Unlock()
		b.node.noticeDown()
		err := b.node.Register(ctx, "svc", hb.PID())
		if err == nil {
			break
		}
		require.ErrorIs(t, err, scheduler.ErrNameTaken)
	}
	eventually(t, "a lets go of the name b took over", func() bool { // once b heard a again and reset it
		_, held := a.sched.Whereis("svc")
		return !held
	})
	a.node.reg.pending.Wait()
	a.node.reg.mu.Lock()
	_, held := a.node.reg.held["svc"]
	a.node.reg.mu.Unlock()
	assert.False(t, held)
	e, err := b.node.reg.bucket().Get(ctx, nameKey("svc"))
	require.NoError(t, err, "b's claim stays")
	assert.Equal(t, strconv.FormatUint(uint64(hb.PID()), 10), string(e.Value()))
}

// TestRequestsOfARefusedNodeAreAnswered: while a node has not heard the
// answer to its reset, it refuses the other's monitor and link requests
// with a down and an exit with noconnection, so their halves fire; once
// answered, requests are carried out again.
func TestRequestsOfARefusedNodeAreAnswered(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	ha, err := a.sched.Submit(&sink{last: "never", done: make(chan struct{})}, "main", nil)
	require.NoError(t, err)
	w := &exitWatcher{make(chan scheduler.Event, 4)}
	hw, err := b.sched.Submit(w, "main", nil)
	require.NoError(t, err)
	next := func() scheduler.Event {
		select {
		case ev := <-w.exits:
			return ev
		case <-time.After(time.Minute):
			t.Fatal("nothing came")
			return scheduler.Event{}
		}
	}

	a.node.mu.Lock()
	a.node.peers[b.node.Node()].resetsGoing++ // a reset of b is on its way
	a.node.mu.Unlock()
	ref := b.sched.Monitor(hw.PID(), ha.PID())
	ev := next()
	assert.Equal(t, scheduler.EventDown, ev.Type)
	assert.Equal(t, ref, ev.Tag)
	assert.ErrorIs(t, ev.Error, scheduler.ErrNoConnection)
	require.NoError(t, b.sched.Link(hw.PID(), ha.PID()))
	ev = next()
	assert.Equal(t, scheduler.EventExit, ev.Type)
	assert.Equal(t, ha.PID(), ev.From)
	assert.ErrorIs(t, ev.Error, scheduler.ErrNoConnection)

	a.node.mu.Lock()
	a.node.peers[b.node.Node()].resetsGoing--
	a.node.mu.Unlock()
	signalled(t, a, func() {
		ref = b.sched.Monitor(hw.PID(), ha.PID())
	})
	a.sched.Kill(ha.PID(), scheduler.ErrShutdown)
	ev = next()
	assert.Equal(t, scheduler.EventDown, ev.Type)
	assert.Equal(t, ref, ev.Tag)
	assert.ErrorIs(t, ev.Error, scheduler.ErrShutdown)
}
