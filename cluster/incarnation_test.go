package cluster

// A node number is never held by two live nodes (auth.go, cluster.go):
// a joining node skips a number a live node claims, a frame for another
// incarnation of a number is not delivered, and of two live nodes with
// one number the later gives way.

import (
	"context"
	"encoding/binary"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// TestResetCounterSkipsLiveNumbers: after the counter went back (a
// server that lost its store), a joining node does not take the number
// of a node that is up.
func TestResetCounterSkipsLiveNumbers(t *testing.T) {
	srv := startServer(t)
	a := join(t, srv, "a")
	ctx := t.Context()
	js, err := jetstream.New(rawConnTo(t, srv))
	require.NoError(t, err)
	ids, err := js.KeyValue(ctx, "luarun_ids")
	require.NoError(t, err)
	_, err = ids.Put(ctx, "next", []byte(strconv.Itoa(a.node.Node()-1))) // the next number taken would be a's
	require.NoError(t, err)
	b := join(t, srv, "b")
	assert.NotEqual(t, a.node.Node(), b.node.Node())
}

// TestFrameForAnotherIncarnationIsDropped: a batch for another
// incarnation of this node's number is not delivered, and is counted.
func TestFrameForAnotherIncarnationIsDropped(t *testing.T) {
	srv := startServer(t)
	b := join(t, srv, "b")
	k := &sink{last: "last", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)
	raw := rawConnTo(t, srv)
	const source = 77
	old := framed(t, b.node, frame{source, 1, kindMessage, scheduler.NodePID(source, 1), hk.PID()}, "for the old one")
	binary.BigEndian.PutUint64(old[10:], b.node.incarnation-1<<22) // the receiver's incarnation: an earlier one
	require.NoError(t, raw.Publish(b.node.subject(b.node.Node()), old))
	require.NoError(t, raw.Publish(b.node.subject(b.node.Node()), framed(t, b.node, frame{source, 1, kindMessage, scheduler.NodePID(source, 1), hk.PID()}, "last")))
	select {
	case <-k.done:
	case <-time.After(time.Minute):
		t.Fatal("the message did not come")
	}
	k.mu.Lock()
	assert.Equal(t, []any{"last"}, k.got)
	k.mu.Unlock()
	assert.Equal(t, uint64(1), b.node.Stats().Stale)
}

// TestLaterIncarnationGivesWay: a node that hears a heartbeat of an
// earlier incarnation with its number leaves the cluster; one that hears
// a later one stays.
func TestLaterIncarnationGivesWay(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	raw := rawConnTo(t, srv)
	beat := func(j joined, inc uint64) {
		text := strconv.Itoa(j.node.Node()) + " twin " + strconv.FormatUint(inc, 10) + " 1 up"
		require.NoError(t, raw.Publish("luarun.heartbeat", []byte(text)))
	}
	beat(a, a.node.incarnation+1) // later: a stays
	beat(b, b.node.incarnation-1) // earlier: b gives way
	select {
	case <-b.node.stop:
	case <-time.After(time.Minute):
		t.Fatal("b did not leave")
	}
	require.NoError(t, raw.Flush())
	waitUp(t, []string{"a"}, a) // b said bye
	select {
	case <-a.node.stop:
		t.Fatal("a left")
	default:
	}
}

// TestNodeNamesAreChecked: a name that is not a key character gets a
// clear error before anything is sent.
func TestNodeNamesAreChecked(t *testing.T) {
	for _, name := range []string{"a b", "node/1", ".a", "a..b", "a*", "ü"} {
		err := checkName(name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "the node name")
	}
	for _, name := range []string{"a", "web-1", "eu.web_2"} {
		assert.NoError(t, checkName(name))
	}
}

// hoarder keeps every message it is given unread (its Backlog), so that
// a bounded mailbox fills.
type hoarder struct{ held int }

func (h *hoarder) Init(context.Context, string, payload.Payloads) error { return nil }
func (h *hoarder) Close()                                               {}
func (h *hoarder) Step(evs []scheduler.Event, out *scheduler.StepOutput) error {
	for _, ev := range evs {
		switch ev.Type {
		case scheduler.EventCancel:
			return ev.Error
		case scheduler.EventMessage:
			h.held++
		}
	}
	out.Backlog, out.Status = h.held, scheduler.StatusReceive
	return nil
}

// TestRemoteMailboxFullIsCounted: a message from another node dropped
// because its process's mailbox is full is counted as such, not as one
// for a process that had ended.
func TestRemoteMailboxFullIsCounted(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := Join(ctx, Config{URL: srv.URL(), Name: "b", Heartbeat: 100 * time.Millisecond})
	require.NoError(t, err)
	s := scheduler.New(scheduler.Options{Workers: 1, Relay: n, MaxMailbox: 1})
	require.NoError(t, n.Attach(s))
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		n.Close()
	})
	h, err := s.Submit(&hoarder{}, "main", nil)
	require.NoError(t, err)
	raw := rawConnTo(t, srv)
	const source = 77
	for seq := uint64(1); seq <= 3; seq++ {
		require.NoError(t, raw.Publish(n.subject(n.Node()), framed(t, n, frame{source, seq, kindMessage, scheduler.NodePID(source, 1), h.PID()}, "m")))
	}
	waitFor(t, "the three are counted", time.Minute, func() bool {
		st := n.Stats()
		return st.Delivered+st.MailboxFull+st.Undeliverable == 3
	})
	st := n.Stats()
	assert.Equal(t, uint64(1), st.Delivered)
	assert.Equal(t, uint64(2), st.MailboxFull)
	assert.Zero(t, st.Undeliverable)
}
