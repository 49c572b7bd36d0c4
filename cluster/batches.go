package cluster

// Sending: numbering, batching and the flusher.
//
// NATS's cost is per message: the client's publish, the server's parse
// and routing, the receiving client's parse and dispatch to the
// subscription. A stream of small messages between processes would pay
// it for each one. So what a node sends to another travels in batches: a
// NATS message carries one or more frames (messages.go), each after its
// length in 4 bytes (big-endian).
//
// Forward, Signal and the heartbeats' ticks append their frame to the
// open batch of its node under out.mu, and return; the frame takes the
// node's next number there. One goroutine, the flusher, takes every open
// batch under out.mu and publishes them, oldest first, outside it. Since
// numbers are taken in append order and one goroutine publishes the
// batches in that order, the numbers reach each node in order, as NATS
// keeps the order of one connection's messages to one subject.
//
// Batches form by themselves, without a timer: the append that finds no
// open batch (out.size 0) wakes the flusher, and what is appended while
// the flusher wakes and publishes waits for its next round. A lone
// message therefore goes at once, and a stream that outpaces the
// flusher fills batches of up to batchBytes. No batch is larger than the
// server's largest message (its max_payload, read again each round): a
// frame that would take its batch past it starts one of its own, and a
// frame too large alone is the sender's error, as NATS's would be.
//
// Senders wait while maxPending bytes are appended and not yet taken:
// the flusher, whose Publish blocks on the socket when the connection is
// behind, holds back the senders, as a Publish in Forward itself did.
//
// A publish that NATS refuses (the connection is closed, or its
// reconnect buffer is full while the server is away) loses frames that
// were numbered: they are counted Unsent here, and the receiving node
// counts them Lost when a later number reaches it — a later frame, or a
// tick: after a refused publish the node ticks to that node for
// tickHeartbeats heartbeats again.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/luarun/luarun/scheduler"
)

const (
	// batchBytes is the size past which a batch is closed and the next
	// frame starts another (unless one frame alone is larger).
	batchBytes = 64 << 10
	// maxPending is how many bytes may wait for the flusher before
	// senders wait.
	maxPending = 4 << 20
	// keptBatches is how many published batches are kept for reuse.
	keptBatches = 64
	// lengthBytes is the size of a frame's length.
	lengthBytes = 4
)

// errLeft is a send after Close.
var errLeft = errors.New("the node has left the cluster")

// errResetting is a monitor or link request to a node whose connection
// with this one is being reset (reset.go).
var errResetting = errors.New("the connection with the node is being reset")

// outbound is what this node sends: the numbers and the open batches of
// each node. All under mu, but wake and flushed.
type outbound struct {
	mu    sync.Mutex
	room  sync.Cond     // senders wait on it while size ≥ maxPending; the flusher broadcasts
	dests map[int]*dest // node number → what this node sent it
	last  *dest         // the last one sent to: a stream looks up no map
	open  []*dest       // the nodes with open batches, in no order
	size  int           // bytes in open batches
	free  []*batch      // published batches, kept for reuse
	// maxPayload: the largest NATS message the server takes (set by
	// init, refreshed by the flusher each round)
	maxPayload int
	// closed: Close has begun; nothing more is appended
	closed bool
	// hdr is the length of a batch's header (batchHeader), which the
	// flusher fills in: every batch's buf starts with it
	hdr int

	wake    chan struct{} // capacity 1: open has something; sent by the append that found size 0
	flushed chan struct{} // closed when the flusher returns
}

// dest is what this node sent to another (under outbound.mu).
type dest struct {
	node  int
	inc   uint64   // its incarnation, as this node last heard (0: not yet)
	seq   uint64   // the last number sent to it
	ticks int      // the ticks still to send it
	open  []*batch // its batches not yet published, oldest first
	// resetting: the connection with it is being reset (reset.go); its
	// monitor and link requests are refused meanwhile
	resetting int
}

// batch is one NATS message's worth of frames for one node.
type batch struct {
	buf      []byte
	numbered uint64 // the frames in buf that took a number (not ticks)
	to       uint64 // the receiving node's incarnation its frames are for
}

func (o *outbound) init(maxPayload, hdr int) {
	o.room.L = &o.mu
	o.hdr = hdr
	o.maxPayload = maxPayload
	o.dests = map[int]*dest{}
	o.wake, o.flushed = make(chan struct{}, 1), make(chan struct{})
}

// add numbers a frame of v (a message value, a scheduler.RemoteCall or a
// scheduler.Signal) from process from to process to, for node to.Node(),
// and appends it to that node's open batch. A value that cannot be
// encoded, or whose frame alone would be a NATS message larger than the
// server takes, takes no number and is an error.
func (o *outbound) add(source int, from, to scheduler.PID, v any) error {
	_, err := o.addNumbered(source, from, to, v)
	return err
}

// addNumbered is add, returning the number the frame took.
func (o *outbound) addNumbered(source int, from, to scheduler.PID, v any) (uint64, error) {
	node := to.Node()
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.size >= maxPending && !o.closed {
		o.room.Wait()
	}
	if o.closed {
		return 0, errLeft
	}
	d := o.dest(node)
	if sig, ok := v.(scheduler.Signal); ok && d.resetting > 0 &&
		(sig.Kind == scheduler.SignalMonitor || sig.Kind == scheduler.SignalLink) {
		return 0, errResetting
	}
	f := frame{source: source, seq: d.seq + 1, kind: frameKind(v), from: from, to: to}
	b := o.batchFor(d)
	start := len(b.buf)
	buf := appendFrame(append(b.buf, make([]byte, lengthBytes)...), f)
	buf, err := appendBody(buf, v)
	if err != nil {
		return 0, err // b.buf keeps its length: what was appended is dropped
	}
	if len(buf) > o.batchLimit() {
		if n := len(buf) - start + o.hdr; n > o.maxPayload { // n counts the length and header: NATS counts the whole batch
			return 0, fmt.Errorf("a message of %d bytes is larger than the NATS server takes (%d)", n-lengthBytes-o.hdr, o.maxPayload-lengthBytes-o.hdr)
		}
		if start > o.hdr && len(buf) > o.maxPayload { // alone it fits: move it to a batch of its own
			nb := o.newBatch(d)
			nb.buf = append(nb.buf, buf[start:]...)
			b, start, buf = nb, o.hdr, nb.buf
		}
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-lengthBytes))
	b.buf = buf
	b.numbered++
	d.seq, d.ticks = f.seq, tickHeartbeats
	o.grew(len(buf) - start)
	return f.seq, nil
}

// resetting marks node's connection as being reset (by +1) or no longer
// (by -1): its monitor and link requests are refused while it is.
func (o *outbound) resetting(node, by int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dest(node).resetting += by
}

// learn records node's incarnation inc, heard in a heartbeat or read
// in a batch from it. A later incarnation than the one known is a new
// node under that number: its numbers start again, and the batches still
// open for the old one stay addressed to it (the new one drops them).
func (o *outbound) learn(node int, inc uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.dest(node)
	if inc <= d.inc {
		return
	}
	if d.inc != 0 {
		d.seq, d.ticks = 0, 0
	}
	d.inc = inc
}

// addTicks appends a tick to each node this node sent to in its last
// tickHeartbeats heartbeats: the heartbeat goroutine's.
func (o *outbound) addTicks(source int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	for _, d := range o.dests {
		if d.ticks == 0 {
			continue
		}
		d.ticks--
		b := o.batchFor(d)
		start := len(b.buf)
		b.buf = appendFrame(append(b.buf, make([]byte, lengthBytes)...), frame{source: source, seq: d.seq, kind: kindTick})
		binary.BigEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start-lengthBytes))
		o.grew(len(b.buf) - start)
	}
}

// batchLimit is the size past which a batch is closed (under mu).
func (o *outbound) batchLimit() int { return min(batchBytes, o.maxPayload) }

// dest is what this node sent to node (under mu).
func (o *outbound) dest(node int) *dest {
	if d := o.last; d != nil && d.node == node {
		return d
	}
	d := o.dests[node]
	if d == nil {
		d = &dest{node: node}
		o.dests[node] = d
	}
	o.last = d
	return d
}

// batchFor is d's last open batch, or a new one if it has none or that
// one is full (under mu).
func (o *outbound) batchFor(d *dest) *batch {
	if k := len(d.open); k > 0 && len(d.open[k-1].buf) < o.batchLimit() && d.open[k-1].to == d.inc {
		return d.open[k-1]
	}
	return o.newBatch(d)
}

// newBatch opens a batch for d after its others (under mu).
func (o *outbound) newBatch(d *dest) *batch {
	var b *batch
	if k := len(o.free); k > 0 {
		b, o.free = o.free[k-1], o.free[:k-1]
	} else {
		b = &batch{buf: make([]byte, 0, 512)}
	}
	b.buf = append(b.buf[:0], make([]byte, o.hdr)...) // the flusher fills it in
	b.to = d.inc
	if len(d.open) == 0 {
		o.open = append(o.open, d)
	}
	d.open = append(d.open, b)
	return b
}

// grew counts k bytes appended, waking the flusher if they are the first
// since it last took the batches (under mu).
func (o *outbound) grew(k int) {
	if o.size == 0 {
		select {
		case o.wake <- struct{}{}:
		default: // a wake is pending already
		}
	}
	o.size += k
}

// sending is a node's batches that the flusher took.
type sending struct {
	node    int
	batches []*batch
}

// take hands the open batches to the flusher, appended to taken, and
// opens none (under mu).
func (o *outbound) take(taken []sending) []sending {
	for _, d := range o.open {
		taken = append(taken, sending{d.node, d.open})
		d.open = nil
	}
	o.open = o.open[:0]
	o.size = 0
	o.room.Broadcast()
	return taken
}

// flushes is the flusher: it publishes the open batches whenever there
// are some, and once more when the node closes.
func (n *Node) flushes() {
	defer close(n.out.flushed)
	for {
		select {
		case <-n.out.wake:
			n.flush()
		case <-n.stop:
			n.flush() // Close marked the node closed first: this is the last
			return
		}
	}
}

// flush publishes what is open, each node's batches in order.
func (n *Node) flush() {
	o := &n.out
	maxPayload := int(n.nc.MaxPayload()) // another server's, after a reconnect
	o.mu.Lock()
	n.taken = o.take(n.taken[:0])
	o.maxPayload = maxPayload
	o.mu.Unlock()
	var refused []int
	for _, t := range n.taken {
		subject := n.subject(t.node)
		for _, b := range t.batches {
			if len(b.buf) <= o.hdr {
				continue // opened for a frame that was refused
			}
			n.sealBatch(subject, b)
			if err := n.nc.Publish(subject, b.buf); err != nil {
				n.stats.unsent.Add(b.numbered)
				n.logf("cluster: publish to node %d: %v", t.node, err)
				refused = append(refused, t.node)
				continue
			}
			n.stats.published.Add(1)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, node := range refused {
		o.dest(node).ticks = tickHeartbeats // so that the other node hears the last number
	}
	for i, t := range n.taken {
		for _, b := range t.batches {
			if len(o.free) < keptBatches && cap(b.buf) <= 2*batchBytes {
				b.buf, b.numbered = b.buf[:0], 0
				o.free = append(o.free, b)
			}
		}
		n.taken[i] = sending{}
	}
}

// close refuses every send from now on; the flusher publishes
// what was appended before and returns when the node's stop is closed.
func (o *outbound) close() {
	o.mu.Lock()
	o.closed = true
	o.room.Broadcast()
	o.mu.Unlock()
}
