package cluster

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// TestGapsAndDuplicatesAreCounted: a source's numbers that skip are
// counted lost, one that repeats is counted a duplicate and dropped; the
// rest are delivered.
func TestGapsAndDuplicatesAreCounted(t *testing.T) {
	srv := startServer(t)
	b := join(t, srv, "b")
	k := &sink{last: "last", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)
	raw := rawConnTo(t, srv)
	const source = 77 // a node of the test's own
	for _, step := range []struct {
		seq uint64
		msg any
	}{{1, "a"}, {2, "b"}, {5, "c"}, {5, "c again"}, {6, "last"}} {
		require.NoError(t, raw.Publish(b.node.subject(b.node.Node()), framed(t, b.node, frame{source, step.seq, kindMessage, scheduler.NodePID(source, 1), hk.PID()}, step.msg)))
	}
	select {
	case <-k.done:
	case <-time.After(time.Minute):
		t.Fatal("the last message did not come")
	}
	k.mu.Lock()
	assert.Equal(t, []any{"a", "b", "c", "last"}, k.got)
	k.mu.Unlock()
	st := b.node.Stats()
	assert.Equal(t, uint64(2), st.Lost)
	assert.Equal(t, uint64(1), st.Duplicates)
	assert.Equal(t, uint64(4), st.Delivered)
}

// TestServerRestartLosesNothingSilently: a stream from a process's node
// to another goes on across a restart of the NATS server; every send
// the sender was told succeeded is, on the receiving node, delivered,
// undeliverable or counted lost (a gap in the numbers) — exactly; none
// is delivered twice; and the nodes find each other again.
func TestServerRestartLosesNothingSilently(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	srv, err := StartServer(addr)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() }) // the one running at the end, after the nodes close
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	k := &sink{last: "never", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)

	var sent, refused uint64
	send := func() {
		if err := a.sched.Send(0, hk.PID(), int64(sent+refused)); err != nil {
			refused++ // b is not up for a: the reconnect has not happened yet
			time.Sleep(time.Millisecond)
		} else {
			sent++
		}
	}
	stream := uint64(2000)
	if raceEnabled {
		stream = 500
	}
	for sent < stream {
		send()
	}
	srv.Close()
	srv, err = StartServer(addr)
	require.NoError(t, err)
	// go on until messages flow again well after the restart, paced so
	// that the backlog stays small whatever the machine's speed
	for before := b.node.Stats().Delivered; b.node.Stats().Delivered < before+stream; {
		send()
		time.Sleep(50 * time.Microsecond)
	}
	deadline := time.After(2 * time.Minute) // a failure, not a race: it holds within milliseconds
	for {
		st := b.node.Stats()
		if st.Delivered+st.Undeliverable+st.Lost == sent {
			break
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-deadline:
			t.Fatalf("sent %d, %+v: not all accounted for", sent, st)
		}
	}
	st := b.node.Stats()
	assert.Zero(t, st.Duplicates)
	assert.Zero(t, st.Malformed)
	assert.Equal(t, uint64(0), st.Undeliverable)
	t.Log(fmt.Sprintf("sent %d (refused %d while not up): delivered %d, lost %d", sent, refused, st.Delivered, st.Lost))
	// every message the sink got is new: strictly increasing
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := 1; i < len(k.got); i++ {
		require.Less(t, k.got[i-1].(int64), k.got[i].(int64))
	}
	waitUp(t, []string{"a", "b"}, a, b)
}

// framed is a NATS message of one frame, f with msg (none for a tick),
// as a node publishes it.
func framed(t *testing.T, to *Node, f frame, msg any) []byte {
	t.Helper()
	buf := appendFrame(make([]byte, lengthBytes), f)
	if f.kind != kindTick {
		var err error
		buf, err = payload.AppendWire(buf, msg)
		require.NoError(t, err)
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-lengthBytes))
	return sealed(to, nil, f.source, 1, buf)
}

// sealed is a batch of frames from node sender (of incarnation inc) for
// node to, with the MAC made with secret (none if nil): what a node
// publishes, or what a forger without the cluster's secret can make.
func sealed(to *Node, secret []byte, sender int, inc uint64, frames []byte) []byte {
	sign := signer{secret: secret}
	buf := make([]byte, sign.size()+batchHeader, 256)
	h := buf[sign.size():]
	binary.BigEndian.PutUint16(h, uint16(sender))
	binary.BigEndian.PutUint64(h[2:], inc)
	binary.BigEndian.PutUint64(h[10:], to.incarnation)
	buf = append(buf, frames...)
	if sign.on() {
		sign.sum(nil, buf[:0], []byte(to.subject(to.Node())), buf[sign.size():])
	}
	return buf
}

// rawConnTo is a plain NATS connection to srv, closed with the test.
func rawConnTo(t *testing.T, srv *Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// TestTailLossIsSeen: a node that sent to another follows up with
// numbered ticks on its next heartbeats (and stops after a few), so a
// lost last message is counted when a tick comes.
func TestTailLossIsSeen(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	waitUp(t, []string{"a", "b"}, a, b)
	raw := rawConnTo(t, srv)
	frames := make(chan frame, 100)
	_, err := raw.Subscribe(b.node.subject(b.node.Node()), func(m *nats.Msg) {
		eachFrame(m.Data[batchHeader:], func(data []byte) {
			if f, _, ok := readFrame(data); ok {
				frames <- f
			}
		})
	})
	require.NoError(t, err)
	require.NoError(t, raw.Flush())
	require.NoError(t, a.sched.Send(0, scheduler.NodePID(b.node.Node(), 1), "one"))
	next := func() frame {
		select {
		case f := <-frames:
			return f
		case <-time.After(time.Minute):
			t.Fatal("no frame came")
			return frame{}
		}
	}
	f := next()
	assert.Equal(t, frame{a.node.Node(), 1, kindMessage, 0, scheduler.NodePID(b.node.Node(), 1)}, f)
	for range tickHeartbeats {
		f = next()
		assert.Equal(t, frame{source: a.node.Node(), seq: 1, kind: kindTick}, f, "the last number sent")
	}

	// the receiving side: messages 1 and 2 of a node of the test's own
	// come, 3 is lost, a tick saying 3 was the last reveals it (and a
	// repeated tick changes nothing)
	k := &sink{last: "never", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)
	const source = 78
	for seq := uint64(1); seq <= 2; seq++ {
		require.NoError(t, raw.Publish(b.node.subject(b.node.Node()), framed(t, b.node, frame{source, seq, kindMessage, scheduler.NodePID(source, 1), hk.PID()}, "m")))
	}
	for range 2 {
		require.NoError(t, raw.Publish(b.node.subject(b.node.Node()), framed(t, b.node, frame{source: source, seq: 3, kind: kindTick}, nil)))
	}
	require.NoError(t, raw.Flush())
	// a message after the ticks: once it came, so had they
	require.NoError(t, raw.Publish(b.node.subject(b.node.Node()), framed(t, b.node, frame{source, 4, kindMessage, scheduler.NodePID(source, 1), hk.PID()}, "never")))
	select {
	case <-k.done:
	case <-time.After(time.Minute):
		t.Fatal("the last message did not come")
	}
	st := b.node.Stats()
	assert.Equal(t, uint64(1), st.Lost)
	assert.Zero(t, st.Duplicates)
}
