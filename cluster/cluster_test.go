package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startServer starts an in-process NATS server on a free loopback port
// for the test.
func startServer(t *testing.T) *Server {
	t.Helper()
	srv, err := StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// joined is a node and the scheduler attached to it.
type joined struct {
	node  *Node
	sched *scheduler.Scheduler
}

func join(t *testing.T, srv *Server, name string) joined {
	t.Helper()
	return joinWith(t, srv, Config{Name: name})
}

// joinWith is join with cfg (its URL and heartbeat set here).
func joinWith(t *testing.T, srv *Server, cfg Config) joined {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg.URL, cfg.Heartbeat = srv.URL(), 100*time.Millisecond
	n, err := Join(ctx, cfg)
	require.NoError(t, err)
	s := scheduler.New(scheduler.Options{Workers: 2, Relay: n})
	require.NoError(t, n.Attach(s))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
		assert.NoError(t, n.Close())
	})
	return joined{n, s}
}

// waitUp waits until each node sees all the names (heartbeats).
func waitUp(t *testing.T, names []string, nodes ...joined) {
	t.Helper()
	for _, j := range nodes {
		for !assert.ObjectsAreEqual(names, j.node.Nodes()) {
			select {
			case <-time.After(10 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
		}
	}
}

// sink is a process that collects the messages it gets until one equal
// to last.
type sink struct {
	mu   sync.Mutex
	got  []any
	from []scheduler.PID
	last any
	done chan struct{}
}

func (k *sink) Init(context.Context, string, payload.Payloads) error { return nil }
func (k *sink) Close()                                               {}
func (k *sink) Step(evs []scheduler.Event, out *scheduler.StepOutput) error {
	for _, ev := range evs {
		if ev.Type == scheduler.EventCancel {
			return ev.Error // shut down
		}
		if ev.Type != scheduler.EventMessage {
			continue
		}
		k.mu.Lock()
		k.got, k.from = append(k.got, ev.Data), append(k.from, ev.From)
		k.mu.Unlock()
		if ev.Data == k.last {
			close(k.done)
			out.Status = scheduler.StatusDone
			return nil
		}
	}
	out.Status = scheduler.StatusReceive
	return nil
}

// sender sends each of msgs to to, then ends.
type sender struct {
	to   scheduler.PID
	msgs []any
}

func (p *sender) Init(context.Context, string, payload.Payloads) error { return nil }
func (p *sender) Close()                                               {}
func (p *sender) Step(_ []scheduler.Event, out *scheduler.StepOutput) error {
	for _, m := range p.msgs {
		if err := out.Send(p.to, m); err != nil {
			return err
		}
	}
	out.Status = scheduler.StatusDone
	return nil
}

// TestNodesMeet: two nodes get different numbers, their PIDs carry them,
// and each lists both once the heartbeats have passed; a second node of
// the same name is refused while the first is up.
func TestNodesMeet(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	assert.NotEqual(t, a.node.Node(), b.node.Node())
	waitUp(t, []string{"a", "b"}, a, b)
	again, err := Join(t.Context(), Config{URL: srv.URL(), Name: "a"})
	if !assert.ErrorContains(t, err, `a node named "a" is up already`) {
		again.Close()
	}
	assert.ErrorContains(t, a.node.Attach(a.sched), "attached already")
}

// TestNodeClosesWithoutAttach: a node that joined and never attached
// (the runtime failed first) closes, twice, without waiting for
// heartbeats that never started; its name is free again at once.
func TestNodeClosesWithoutAttach(t *testing.T) {
	srv := startServer(t)
	n, err := Join(t.Context(), Config{URL: srv.URL(), Name: "x"})
	require.NoError(t, err)
	require.NoError(t, n.Close())
	require.NoError(t, n.Close())
	n, err = Join(t.Context(), Config{URL: srv.URL(), Name: "x"})
	require.NoError(t, err)
	require.NoError(t, n.Close())
}

// TestEveryMessageIsAccountedFor: what one node forwards, the other
// counts as delivered or as undeliverable (its process had ended), and
// a malformed message published on a node's subject is counted as such.
func TestEveryMessageIsAccountedFor(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	k := &sink{last: "last", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)
	msgs := []any{}
	for i := range 200 {
		msgs = append(msgs, int64(i))
	}
	msgs = append(msgs, "last")
	for i := range 300 { // after the sink has ended, or in its mailbox as it ends
		msgs = append(msgs, int64(i))
	}
	hs, err := a.sched.Submit(&sender{to: hk.PID(), msgs: msgs}, "main", nil)
	require.NoError(t, err)
	_, err = hs.Wait(t.Context())
	require.NoError(t, err)
	forwarded := a.sched.Stats().Forwarded
	assert.Equal(t, uint64(len(msgs)), forwarded)
	for {
		st := b.node.Stats()
		if st.Delivered+st.Undeliverable == forwarded {
			break
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
	<-k.done
	st := b.node.Stats()
	assert.GreaterOrEqual(t, st.Delivered, uint64(201))
	assert.Zero(t, st.Malformed)

	require.NoError(t, a.node.nc.Publish(b.node.subject(b.node.Node()), []byte{0x80}))
	require.NoError(t, a.node.nc.Publish(b.node.subject(b.node.Node()), []byte{1, 2, 0xFF}))
	require.NoError(t, a.node.nc.Flush())
	for b.node.Stats().Malformed < 2 {
		select {
		case <-time.After(5 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
	assert.Equal(t, uint64(2), b.node.Stats().Malformed)
}

// TestMessagesCrossNodesInOrder: 100,000 messages from a process on one
// node to a process on another arrive all, in order, each with its
// sender's PID and its value's type kept; the sending node counts them
// as forwarded. (5,000 under -race.)
func TestMessagesCrossNodesInOrder(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	n := 100000
	if raceEnabled {
		n = 5000
	}
	msgs := make([]any, n)
	for i := range msgs {
		msgs[i] = int64(i + 1)
	}
	msgs[7] = map[string]any{"list": []any{1.5, "x", payload.Null}, "k": map[any]any{int64(2): true}}
	msgs[n-1] = "last"
	k := &sink{last: "last", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)
	assert.Equal(t, b.node.Node(), hk.PID().Node())
	hs, err := a.sched.Submit(&sender{to: hk.PID(), msgs: msgs}, "main", nil)
	require.NoError(t, err)
	select {
	case <-k.done:
	case <-time.After(60 * time.Second):
		k.mu.Lock()
		defer k.mu.Unlock()
		t.Fatalf("%d of %d messages came", len(k.got), n)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	require.Len(t, k.got, n)
	for i, v := range k.got {
		require.Equal(t, msgs[i], v, "message %d", i+1)
		require.Equal(t, hs.PID(), k.from[i])
	}
	assert.Equal(t, uint64(n), a.sched.Stats().Forwarded)
}

// TestSendToANodeThatIsNotUp: a PID of a node that is not in the
// cluster is the sender's error at once.
func TestSendToANodeThatIsNotUp(t *testing.T) {
	srv := startServer(t)
	a := join(t, srv, "a")
	err := a.sched.Send(0, scheduler.NodePID(a.node.Node()+5, 1), "x")
	assert.ErrorContains(t, err, "is not up")
}

// tally is a process that takes want messages ([sender, i] pairs) and
// then ends, keeping them.
type tally struct {
	want int
	got  [][]any
	done chan struct{}
}

func (k *tally) Init(context.Context, string, payload.Payloads) error { return nil }
func (k *tally) Close()                                               {}
func (k *tally) Step(evs []scheduler.Event, out *scheduler.StepOutput) error {
	for _, ev := range evs {
		switch ev.Type {
		case scheduler.EventCancel:
			return ev.Error
		case scheduler.EventMessage:
			k.got = append(k.got, ev.Data.([]any))
		}
	}
	if len(k.got) == k.want {
		close(k.done)
		out.Status = scheduler.StatusDone
		return nil
	}
	out.Status = scheduler.StatusReceive
	return nil
}

// TestConcurrentSendersAcrossNodes: eight processes on one node, run by
// its two workers at once, each stream to one of four processes on another;
// the sending node numbers the messages under one lock while its
// workers forward concurrently, so the receiver sees no false gap or
// repeat: every message arrives once (forwarded = delivered exactly,
// nothing lost or duplicated) and each sender's messages in order.
func TestConcurrentSendersAcrossNodes(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	const senders, sinks = 8, 4
	per := 5000
	if raceEnabled {
		per = 300
	}
	tallies := make([]*tally, sinks)
	pids := make([]scheduler.PID, sinks)
	for i := range tallies {
		tallies[i] = &tally{want: per * senders / sinks, done: make(chan struct{})}
		h, err := b.sched.Submit(tallies[i], "main", nil)
		require.NoError(t, err)
		pids[i] = h.PID()
	}
	for j := range senders {
		msgs := make([]any, per)
		for i := range msgs {
			msgs[i] = []any{int64(j), int64(i)}
		}
		_, err := a.sched.Submit(&sender{to: pids[j%sinks], msgs: msgs}, "main", nil)
		require.NoError(t, err)
	}
	total := uint64(senders * per)
	for { // until b has accounted for every message one way or another
		st := b.node.Stats()
		if a.sched.Stats().Forwarded == total && st.Delivered+st.Lost+st.Duplicates+st.Undeliverable >= total {
			break
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-t.Context().Done():
			t.Fatalf("forwarded %d, %+v", a.sched.Stats().Forwarded, st)
		}
	}
	st := b.node.Stats()
	require.Zero(t, st.Lost)
	require.Zero(t, st.Duplicates)
	for _, k := range tallies {
		<-k.done
	}
	for i, k := range tallies {
		next := map[int64]int64{}
		for _, m := range k.got {
			j, n := m[0].(int64), m[1].(int64)
			require.Equal(t, int64(i), j%sinks, "a message for another sink")
			require.Equal(t, next[j], n, "sender %d's messages out of order", j)
			next[j]++
		}
	}
	st = b.node.Stats()
	assert.Equal(t, total, st.Delivered)
	assert.Zero(t, st.Undeliverable)
}
