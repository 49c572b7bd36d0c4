package cluster

// Messages and signals between nodes.
//
// What one node sends another travels in batches (batches.go): a NATS
// message on the receiving node's subject holds a header and one or more
// frames, each after its length in 4 bytes (big-endian). The header is
//
//	MAC            32 bytes, with a cluster secret only (auth.go): over
//	               the subject and everything after it
//	sender         the sending node's number (2 bytes, big-endian)
//	incarnations   the sender's, then the receiver's (8 bytes each)
//
// A batch whose MAC does not verify is dropped before anything in it is
// read (Stats.Forged); one for another incarnation of this node, or from
// an incarnation of its sender older than one already heard, is dropped
// too (Stats.Stale). A frame is
//
//	source node, sequence, kind, from PID, to PID   uvarints
//	the body, by kind:
//	  message         the value, in payload's wire form
//	  call, reply     the call's number (uvarint), then the value
//	  signal          the signal's kind and reference (uvarints), quiet
//	                  (a byte), the reason (signals.go)
//	  tick            none
//	  reset, ack      the last number the sender received from the
//	                  receiver (uvarint; reset.go)
//
// Messages, calls and signals share one path and one numbering, so a
// process's messages and its end reach another node in the order they
// happened.
//
// Each node numbers what it sends to each other node, 1, 2, 3..., in the
// order the frames reach the wire (batches.go). The receiving node's
// subscription (one goroutine) expects each source's next number: a
// higher one means messages were lost between (a server that went away
// with them, a publish refused while it was away) and counts them Lost;
// a lower or equal one is a duplicate, counted and dropped. So that a
// loss at the end of a stream is seen too, a node that sent to another
// follows up with a tick (a frame with no body, carrying the last number
// sent, taking none) on each of its next tickHeartbeats heartbeats: a
// tick that arrives with a number past the last one received reveals the
// loss. (A stream whose tail and every tick are lost has lost its
// connection for as long: the node is down by then.)

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// tickHeartbeats is how many heartbeats after its last message a node
// ticks to another.
const tickHeartbeats = 4

// inbound is, for each source node, the last number received and the
// incarnation it came from: read and written by the delivering
// subscription's goroutine only.
type inbound struct {
	sources map[int]*received
	last    *received // the last one looked up: a stream looks up no map
}

// received is what this node received from one source node.
type received struct {
	node int
	seq  uint64 // the last number received (0: none yet)
	inc  uint64 // the incarnation it came from (0: none yet)
}

// of is what was received from node source.
func (in *inbound) of(source int) *received {
	if r := in.last; r != nil && r.node == source {
		return r
	}
	r := in.sources[source]
	if r == nil {
		if in.sources == nil {
			in.sources = map[int]*received{}
		}
		r = &received{node: source}
		in.sources[source] = r
	}
	in.last = r
	return r
}

// batchHeader is the length of a batch's header after its MAC: the
// sender's number and the two incarnations.
const batchHeader = 2 + 8 + 8

// incarnation takes the sender incarnation inc of a batch from node
// source: false for one older than the last seen (a replay); a newer one
// starts its numbers again.
func (in *inbound) incarnation(source int, inc uint64) bool {
	r := in.of(source)
	switch {
	case inc < r.inc:
		return false
	case inc > r.inc:
		if r.inc != 0 {
			r.seq = 0
		}
		r.inc = inc
	}
	return true
}

// The kinds of frames.
const (
	kindMessage = iota
	kindCall
	kindReply
	kindSignal
	kindTick     // no body: a number that reveals a loss before it
	kindReset    // the sender lost its connection with the receiver (reset.go)
	kindResetAck // the answer to a reset
)

// frame is a message's header.
type frame struct {
	source   int
	seq      uint64
	kind     uint64
	from, to scheduler.PID
}

// Forward sends msg to process to on its node: the scheduler's Relay. A
// node that is not up, or that this one left, is an error, and so is a
// value too large for the NATS server.
func (n *Node) Forward(from, to scheduler.PID, msg any) error {
	return n.send(from, to, msg)
}

// Signal sends a relation's signal to process sig.To on its node: the
// scheduler's Relay.
func (n *Node) Signal(sig scheduler.Signal) error {
	return n.send(sig.From, sig.To, sig)
}

// send numbers v's frame for to's node and appends it to that node's
// batch (batches.go).
func (n *Node) send(from, to scheduler.PID, v any) error {
	if node := to.Node(); !n.up(node) {
		return fmt.Errorf("node %d is not up", node)
	}
	return n.out.add(n.number, from, to, v)
}

// frameKind is the kind of v's frame: a scheduler.Signal, a
// scheduler.RemoteCall, or a message value.
func frameKind(v any) uint64 {
	switch v := v.(type) {
	case reset:
		if v.ack {
			return kindResetAck
		}
		return kindReset
	case scheduler.Signal:
		return kindSignal
	case scheduler.RemoteCall:
		if v.Reply {
			return kindReply
		}
		return kindCall
	}
	return kindMessage
}

// appendBody appends v's body (frameKind's kinds).
func appendBody(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case reset:
		return binary.AppendUvarint(buf, v.upTo), nil
	case scheduler.Signal:
		return appendSignal(buf, v)
	case scheduler.RemoteCall:
		return payload.AppendWire(binary.AppendUvarint(buf, v.ID), v.Value)
	}
	return payload.AppendWire(buf, v)
}

func appendFrame(buf []byte, f frame) []byte {
	buf = binary.AppendUvarint(buf, uint64(f.source))
	buf = binary.AppendUvarint(buf, f.seq)
	buf = binary.AppendUvarint(buf, f.kind)
	buf = binary.AppendUvarint(buf, uint64(f.from))
	return binary.AppendUvarint(buf, uint64(f.to))
}

// readFrame reads a header and returns it with the body after it.
func readFrame(data []byte) (f frame, rest []byte, ok bool) {
	var fields [5]uint64
	for i := range fields {
		x, k := binary.Uvarint(data)
		if k <= 0 {
			return frame{}, nil, false
		}
		fields[i], data = x, data[k:]
	}
	if fields[0] > scheduler.MaxNode || fields[2] > kindResetAck {
		return frame{}, nil, false
	}
	return frame{int(fields[0]), fields[1], fields[2], scheduler.PID(fields[3]), scheduler.PID(fields[4])}, data, true
}

// deliver hands what was published for one of this node's processes to
// the scheduler (one goroutine per subscription: in order), counting what
// it cannot deliver and the gaps in each source's numbers.
func (n *Node) deliver(m *nats.Msg) {
	n.mu.RLock()
	s := n.sched
	n.mu.RUnlock()
	sender, data, ok := n.openBatch(m)
	if !ok {
		return
	}
	if !eachFrame(data, func(f []byte) { n.deliverFrame(s, sender, f) }) {
		n.stats.malformed.Add(1) // the rest cannot be read (its frames count as lost too, when a later number comes: only foreign input does this)
	}
}

// openBatch verifies a batch's MAC and reads its header, before anything
// else (a sequence number above all) is touched, and returns its sender
// and its frames; it counts and refuses a batch it drops.
func (n *Node) openBatch(m *nats.Msg) (sender int, frames []byte, ok bool) {
	mac := n.sign.size()
	if len(m.Data) < mac+batchHeader {
		n.stats.malformed.Add(1)
		return 0, nil, false
	}
	if !n.sign.verify(n.deliverHash, m.Data[:mac], []byte(m.Subject), m.Data[mac:]) {
		n.stats.forged.Add(1)
		return 0, nil, false
	}
	h := m.Data[mac:]
	sender = int(binary.BigEndian.Uint16(h))
	from, to := binary.BigEndian.Uint64(h[2:]), binary.BigEndian.Uint64(h[10:])
	if to != n.incarnation || sender > scheduler.MaxNode || !n.in.incarnation(sender, from) {
		n.stats.stale.Add(1)
		return 0, nil, false
	}
	n.out.learn(sender, from)
	return sender, h[batchHeader:], true
}

// sealBatch fills in b's header for node subject and, with a secret,
// its MAC: the flusher's.
func (n *Node) sealBatch(subject string, b *batch) {
	mac := n.sign.size()
	h := b.buf[mac:]
	binary.BigEndian.PutUint16(h, uint16(n.number))
	binary.BigEndian.PutUint64(h[2:], n.incarnation)
	binary.BigEndian.PutUint64(h[10:], b.to)
	if mac > 0 {
		n.sign.sum(n.flushHash, b.buf[:0], []byte(subject), h) // written over the room left for it
	}
}

// eachFrame calls do with each frame of a batch in turn, and reports
// whether the batch was read to its end (a length that runs past it
// ends it early).
func eachFrame(data []byte, do func(frame []byte)) bool {
	for len(data) > 0 {
		if len(data) < lengthBytes || uint64(binary.BigEndian.Uint32(data)) > uint64(len(data)-lengthBytes) {
			return false
		}
		end := lengthBytes + int(binary.BigEndian.Uint32(data))
		do(data[lengthBytes:end])
		data = data[end:]
	}
	return true
}

// deliverFrame hands one frame to s. A frame whose header can be read
// takes its number even if its body cannot: it is counted malformed,
// not lost too.
func (n *Node) deliverFrame(s *scheduler.Scheduler, sender int, data []byte) {
	f, body, ok := readFrame(data)
	if !ok {
		n.stats.malformed.Add(1)
		return
	}
	if f.source != sender { // a frame of another node's, in this one's batch
		n.stats.forged.Add(1)
		return
	}
	if f.kind == kindTick {
		if len(body) > 0 {
			n.stats.malformed.Add(1)
			return
		}
		if n.in.tick(n, f) {
			n.connectionLost(s, f.source)
		}
		return
	}
	isNew, gap := n.in.next(n, f)
	if gap {
		n.connectionLost(s, f.source) // before this frame: it is of the new connection
	}
	if !isNew {
		return
	}
	msg, sig, upTo, err := readBody(f, body)
	switch {
	case err != nil:
		n.stats.malformed.Add(1)
	case f.kind == kindReset || f.kind == kindResetAck:
		n.stats.signals.Add(1)
		n.handleReset(s, f, upTo)
	case f.kind == kindSignal:
		n.stats.signals.Add(1)
		if n.refuseStale(sig) {
			return
		}
		s.HandleSignal(sig)
	default:
		n.countSend(s.Send(f.from, f.to, msg))
	}
}

// countSend counts a delivery by its error: delivered, dropped for a
// full mailbox, or undeliverable (the process ended, or never was).
func (n *Node) countSend(err error) {
	switch {
	case err == nil:
		n.stats.delivered.Add(1)
	case errors.Is(err, scheduler.ErrMailboxFull):
		n.stats.mailboxFull.Add(1)
	default:
		n.stats.undeliverable.Add(1)
	}
}

// readBody reads the body of frame f (not a tick): a reset's number, a
// signal, or a message (a value, or a scheduler.RemoteCall). Any bytes
// give a result or an error, never a panic (FuzzFrames).
func readBody(f frame, body []byte) (msg any, sig scheduler.Signal, upTo uint64, err error) {
	switch f.kind {
	case kindReset, kindResetAck:
		var k int
		if upTo, k = binary.Uvarint(body); k <= 0 || k != len(body) {
			err = errors.New("a malformed reset")
		}
	case kindSignal:
		sig, err = readSignal(body, f)
	case kindCall, kindReply:
		msg, err = readCall(body, f.kind == kindReply)
	default:
		msg, err = readValue(body)
	}
	return msg, sig, upTo, err
}

// readValue reads a body that is one value and nothing after it.
func readValue(body []byte) (any, error) {
	v, rest, err := payload.UnmarshalWire(body)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%d bytes after the value", len(rest))
	}
	return v, err
}

// readCall reads a call's or a reply's body.
func readCall(body []byte, reply bool) (any, error) {
	id, k := binary.Uvarint(body)
	if k <= 0 {
		return nil, errors.New("no call number")
	}
	v, err := readValue(body[k:])
	return scheduler.RemoteCall{ID: id, Reply: reply, Value: v}, err
}

// next checks f's number against its source's last one (0 before the
// first: numbers start at 1), counting a gap as lost, and reports whether
// f is new (not a duplicate) and whether frames were lost before it.
func (in *inbound) next(n *Node, f frame) (isNew, gap bool) {
	r := in.of(f.source)
	last := r.seq
	switch {
	case f.seq <= last:
		n.stats.duplicates.Add(1)
		return false, false
	case f.seq > last+1:
		gap = true
		n.stats.lost.Add(f.seq - last - 1)
		n.logf("cluster: %d messages from node %d were lost on the way", f.seq-last-1, f.source)
	}
	r.seq = f.seq
	return true, gap
}

// tick checks a tick's number, the last its source sent here, against
// the last received: the messages between were lost. It reports whether
// some were.
func (in *inbound) tick(n *Node, f frame) bool {
	r := in.of(f.source)
	last := r.seq
	if f.seq <= last {
		return false
	}
	n.stats.lost.Add(f.seq - last)
	n.logf("cluster: the last %d messages from node %d were lost on the way", f.seq-last, f.source)
	r.seq = f.seq
	return true
}
