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
// flusher fills batches of up to batchBytes.
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

// outbound is what this node sends: the numbers and the open batches of
// each node. All under mu, but wake and flushed.
type outbound struct {
	mu    sync.Mutex
	room  sync.Cond        // senders wait on it while size ≥ maxPending; the flusher broadcasts
	seq   map[int]uint64   // node number → the last number sent to it
	ticks map[int]int      // node number → the ticks still to send it
	open  map[int][]*batch // node number → its batches not yet published, oldest first
	spare map[int][]*batch // the flusher's last, emptied: the next open
	size  int              // bytes in open
	free  []*batch         // published batches, kept for reuse
	// closed: Close has begun; nothing more is appended
	closed bool

	wake    chan struct{} // capacity 1: open has something; sent by the append that found size 0
	flushed chan struct{} // closed when the flusher returns
}

// batch is one NATS message's worth of frames for one node.
type batch struct {
	buf      []byte
	numbered uint64 // the frames in buf that took a number (not ticks)
}

func (o *outbound) init() {
	o.room.L = &o.mu
	o.seq, o.ticks = map[int]uint64{}, map[int]int{}
	o.open, o.spare = map[int][]*batch{}, map[int][]*batch{}
	o.wake, o.flushed = make(chan struct{}, 1), make(chan struct{})
}

// add numbers a frame of v (a message value, a scheduler.RemoteCall or a
// scheduler.Signal) from process from to process to, for node to.Node(),
// and appends it to that node's open batch; maxPayload is the largest
// NATS message the server takes. A value that cannot be encoded, or
// whose frame is larger than maxPayload, takes no number and is an error.
func (o *outbound) add(source int, from, to scheduler.PID, v any, maxPayload func() int) error {
	node := to.Node()
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.size >= maxPending && !o.closed {
		o.room.Wait()
	}
	if o.closed {
		return errLeft
	}
	f := frame{source: source, seq: o.seq[node] + 1, kind: frameKind(v), from: from, to: to}
	b := o.batchFor(node)
	start := len(b.buf)
	buf := appendFrame(append(b.buf, make([]byte, lengthBytes)...), f)
	buf, err := appendBody(buf, v)
	if err != nil {
		return err // b.buf keeps its length: what was appended is dropped
	}
	if len(buf) > batchBytes {
		if n := len(buf) - start - lengthBytes; n > maxPayload() {
			return fmt.Errorf("a message of %d bytes is larger than the NATS server takes (%d)", n, maxPayload())
		}
		if start > 0 && len(buf) > maxPayload() { // alone it fits: move it to a batch of its own
			nb := o.newBatch(node)
			nb.buf = append(nb.buf, buf[start:]...)
			b, start, buf = nb, 0, nb.buf
		}
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-lengthBytes))
	b.buf = buf
	b.numbered++
	o.seq[node] = f.seq
	o.ticks[node] = tickHeartbeats
	o.grew(len(buf) - start)
	return nil
}

// addTicks appends a tick to each node this node sent to in its last
// tickHeartbeats heartbeats: the heartbeat goroutine's.
func (o *outbound) addTicks(source int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	for node, left := range o.ticks {
		if left <= 1 {
			delete(o.ticks, node)
		} else {
			o.ticks[node] = left - 1
		}
		b := o.batchFor(node)
		start := len(b.buf)
		b.buf = appendFrame(append(b.buf, make([]byte, lengthBytes)...), frame{source: source, seq: o.seq[node], kind: kindTick})
		binary.BigEndian.PutUint32(b.buf[start:], uint32(len(b.buf)-start-lengthBytes))
		o.grew(len(b.buf) - start)
	}
}

// batchFor is node's last open batch, or a new one if it has none or
// that one is full (under mu).
func (o *outbound) batchFor(node int) *batch {
	if open := o.open[node]; len(open) > 0 && len(open[len(open)-1].buf) < batchBytes {
		return open[len(open)-1]
	}
	return o.newBatch(node)
}

// newBatch opens a batch for node after its others (under mu).
func (o *outbound) newBatch(node int) *batch {
	var b *batch
	if k := len(o.free); k > 0 {
		b, o.free = o.free[k-1], o.free[:k-1]
	} else {
		b = &batch{buf: make([]byte, 0, 512)}
	}
	o.open[node] = append(o.open[node], b)
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

// take hands the open batches to the flusher and opens none (under mu).
func (o *outbound) take() map[int][]*batch {
	taken := o.open
	o.open, o.spare = o.spare, nil
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
	o.mu.Lock()
	taken := o.take()
	o.mu.Unlock()
	var refused []int
	for node, batches := range taken {
		subject := n.subject(node)
		for _, b := range batches {
			if err := n.nc.Publish(subject, b.buf); err != nil {
				n.stats.unsent.Add(b.numbered)
				n.logf("cluster: publish to node %d: %v", node, err)
				refused = append(refused, node)
				continue
			}
			n.stats.published.Add(1)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, node := range refused {
		o.ticks[node] = tickHeartbeats // so that the other node hears the last number
	}
	for node, batches := range taken {
		for _, b := range batches {
			if len(o.free) < keptBatches && cap(b.buf) <= 2*batchBytes {
				b.buf, b.numbered = b.buf[:0], 0
				o.free = append(o.free, b)
			}
		}
		delete(taken, node)
	}
	o.spare = taken
}

// closeOutbound refuses every send from now on; the flusher publishes
// what was appended before and returns when the node's stop is closed.
func (o *outbound) close() {
	o.mu.Lock()
	o.closed = true
	o.room.Broadcast()
	o.mu.Unlock()
}
