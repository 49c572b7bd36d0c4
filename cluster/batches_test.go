package cluster

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// newOutbound is an outbound with no flusher, for a server that takes
// messages up to maxPayload: the test takes its batches.
func newOutbound(maxPayload int) *outbound {
	o := &outbound{}
	o.init(maxPayload, batchHeader)
	return o
}

// unlimited is a server's max_payload that takes anything.
const unlimited = 1 << 30

// batchesOf takes o's open batches, which must all be for node.
func batchesOf(t *testing.T, o *outbound, node int) []*batch {
	t.Helper()
	taken := o.take(nil)
	require.Len(t, taken, 1)
	require.Equal(t, node, taken[0].node)
	return taken[0].batches
}

// framesOf reads a batch back: its frames' headers and bodies, in order.
func framesOf(t *testing.T, b *batch) (frames []frame, bodies [][]byte) {
	t.Helper()
	require.True(t, eachFrame(b.buf[batchHeader:], func(data []byte) {
		f, body, ok := readFrame(data)
		require.True(t, ok)
		frames, bodies = append(frames, f), append(bodies, body)
	}), "the batch reads to its end")
	return frames, bodies
}

// TestBatchWireForm: messages, calls, replies, signals and ticks for one
// node go into one batch in the order they were added, numbered 1, 2, 3...
// (a tick carrying the last number and taking none), each readable as
// it was sent; the first add wakes the flusher, the others do not.
func TestBatchWireForm(t *testing.T) {
	o := newOutbound(unlimited)
	from, to := scheduler.NodePID(1, 5), scheduler.NodePID(2, 9)
	sig := scheduler.Signal{Kind: scheduler.SignalKill, From: from, To: to, Reason: scheduler.ErrShutdown}
	values := []any{"hello", scheduler.RemoteCall{ID: 7, Value: int64(3)}, scheduler.RemoteCall{ID: 7, Reply: true, Value: true}, sig}
	for _, v := range values {
		require.NoError(t, o.add(1, from, to, v))
	}
	o.addTicks(1)
	require.NoError(t, o.add(1, from, to, 2.5))
	assert.Len(t, o.wake, 1)

	taken := batchesOf(t, o, 2)
	require.Len(t, taken, 1)
	assert.Equal(t, uint64(5), taken[0].numbered, "ticks take no number")
	frames, bodies := framesOf(t, taken[0])
	want := []frame{
		{1, 1, kindMessage, from, to}, {1, 2, kindCall, from, to}, {1, 3, kindReply, from, to},
		{1, 4, kindSignal, from, to}, {source: 1, seq: 4, kind: kindTick}, {1, 5, kindMessage, from, to},
	}
	assert.Equal(t, want, frames)
	v, err := readValue(bodies[0])
	require.NoError(t, err)
	assert.Equal(t, "hello", v)
	v, err = readCall(bodies[1], false)
	require.NoError(t, err)
	assert.Equal(t, values[1], v)
	v, err = readCall(bodies[2], true)
	require.NoError(t, err)
	assert.Equal(t, values[2], v)
	got, err := readSignal(bodies[3], frames[3])
	require.NoError(t, err)
	assert.Equal(t, sig, got)
	assert.Empty(t, bodies[4])
	v, err = readValue(bodies[5])
	require.NoError(t, err)
	assert.Equal(t, 2.5, v)
}

// TestBatchesSplit: a stream fills batches of about batchBytes, numbered
// on across them; a frame too large for the server is refused and takes
// no number; one that fits alone but not beside the others goes in a
// batch of its own.
func TestBatchesSplit(t *testing.T) {
	o := newOutbound(unlimited)
	to := scheduler.NodePID(2, 1)
	kb := strings.Repeat("x", 1000)
	const count = 3 * batchBytes / 1000
	for range count {
		require.NoError(t, o.add(1, 0, to, kb))
	}
	taken := batchesOf(t, o, 2)
	require.Greater(t, len(taken), 2)
	seq := uint64(0)
	for _, b := range taken {
		assert.Less(t, len(b.buf), batchBytes+1100, "a batch closes past batchBytes")
		frames, _ := framesOf(t, b)
		assert.Equal(t, uint64(len(frames)), b.numbered)
		for _, f := range frames {
			seq++
			assert.Equal(t, seq, f.seq)
		}
	}
	assert.Equal(t, uint64(count), seq)

	// a server whose max_payload is just past batchBytes
	limit := batchBytes + 1000
	o = newOutbound(limit)
	require.ErrorContains(t, o.add(1, 0, to, strings.Repeat("y", limit)), "larger than the NATS server takes")
	filler := strings.Repeat("z", batchBytes-40) // its batch stays just open
	require.NoError(t, o.add(1, 0, to, filler))
	big := strings.Repeat("w", 1500)
	require.NoError(t, o.add(1, 0, to, big))
	taken = batchesOf(t, o, 2)
	require.Len(t, taken, 2, "the batch the refused one opened took the next")
	for i, want := range []string{filler, big} {
		b := taken[i]
		assert.LessOrEqual(t, len(b.buf), limit)
		frames, bodies := framesOf(t, b)
		require.Len(t, frames, 1)
		assert.Equal(t, uint64(i+1), frames[0].seq, "the refused one took no number")
		v, err := readValue(bodies[0])
		require.NoError(t, err)
		assert.Equal(t, want, v)
	}
}

// TestBatchesFitTheServer: no batch is larger than the server's
// max_payload, whatever it is: a frame whose batch, its length included,
// would be one byte over is refused, one that fits exactly is not; a
// server that takes less than batchBytes gets batches of its size.
func TestBatchesFitTheServer(t *testing.T) {
	to := scheduler.NodePID(2, 1)
	exact := func(limit int) string { // a string whose lone batch is limit bytes
		str := ""
		for range 10 {
			o := newOutbound(unlimited)
			require.NoError(t, o.add(1, 0, to, str))
			size := len(batchesOf(t, o, 2)[0].buf)
			if size == limit {
				return str
			}
			str = strings.Repeat("s", len(str)+limit-size) // the string's length may take another byte
		}
		require.FailNow(t, "no string makes a batch of exactly", "%d bytes", limit)
		return ""
	}
	for _, limit := range []int{batchBytes + 7, 16 << 10, 600} {
		o := newOutbound(limit)
		require.NoError(t, o.add(1, 0, to, exact(limit)))
		require.ErrorContains(t, o.add(1, 0, to, exact(limit)+"!"), "larger than the NATS server takes")
		for i := range 3 * batchBytes / 20 {
			require.NoError(t, o.add(1, 0, to, strings.Repeat("m", i%40)))
		}
		seq := uint64(0)
		for _, b := range batchesOf(t, o, 2) {
			assert.LessOrEqual(t, len(b.buf), limit)
			frames, _ := framesOf(t, b)
			for _, f := range frames {
				seq++
				require.Equal(t, seq, f.seq)
			}
		}
		assert.Equal(t, uint64(1+3*batchBytes/20), seq)
	}
}

// TestClosedOutboundRefuses: a sender waiting for room, or one that
// comes after, is refused once the node closes.
func TestClosedOutboundRefuses(t *testing.T) {
	o := newOutbound(unlimited)
	to := scheduler.NodePID(2, 1)
	chunk := strings.Repeat("x", batchBytes)
	for o.size < maxPending {
		require.NoError(t, o.add(1, 0, to, chunk))
	}
	refused := make(chan error)
	go func() { refused <- o.add(1, 0, to, "waits") }()
	o.close()
	assert.ErrorIs(t, <-refused, errLeft)
	assert.ErrorIs(t, o.add(1, 0, to, "after"), errLeft)
}

// TestRefusedPublishIsCounted: a batch NATS refuses (its connection
// closed) counts its messages Unsent, and the node ticks to that node
// again so that it hears the last number.
func TestRefusedPublishIsCounted(t *testing.T) {
	srv := startServer(t)
	nc, err := nats.Connect(srv.URL())
	require.NoError(t, err)
	nc.Close()
	n := &Node{cfg: Config{Cluster: "t"}, nc: nc}
	n.out.init(unlimited, batchHeader)
	to := scheduler.NodePID(2, 1)
	for range 3 {
		require.NoError(t, n.out.add(1, 0, to, "lost"))
	}
	n.out.dest(2).ticks = 0
	n.flush()
	st := n.Stats()
	assert.Equal(t, uint64(3), st.Unsent)
	assert.Zero(t, st.Published)
	assert.Equal(t, tickHeartbeats, n.out.dest(2).ticks)
	assert.Len(t, n.out.free, 1, "the batch is kept for reuse")
	assert.Empty(t, n.out.open)
	assert.Empty(t, n.out.dest(2).open)
}

// TestRequestsRefusedWhileResetting: while a node's connection is being
// reset, monitor and link requests to it are refused without a number;
// messages, downs and exits go as ever.
func TestRequestsRefusedWhileResetting(t *testing.T) {
	o := newOutbound(unlimited)
	from, to := scheduler.NodePID(1, 5), scheduler.NodePID(2, 9)
	o.resetting(2, +1)
	for _, kind := range []scheduler.SignalKind{scheduler.SignalMonitor, scheduler.SignalLink} {
		assert.ErrorIs(t, o.add(1, from, to, scheduler.Signal{Kind: kind, From: from, To: to}), errResetting)
	}
	require.NoError(t, o.add(1, from, to, "a message"))
	require.NoError(t, o.add(1, from, to, scheduler.Signal{Kind: scheduler.SignalExit, From: from, To: to, Reason: scheduler.ErrNoConnection}))
	require.NoError(t, o.add(1, from, scheduler.NodePID(3, 1), scheduler.Signal{Kind: scheduler.SignalMonitor, From: from, To: scheduler.NodePID(3, 1)}), "another node's are not")
	o.resetting(2, -1)
	require.NoError(t, o.add(1, from, to, scheduler.Signal{Kind: scheduler.SignalMonitor, From: from, To: to}))
	assert.Equal(t, uint64(3), o.dest(2).seq, "the refused took no number")
}
