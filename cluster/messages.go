package cluster

// Messages and signals between nodes.
//
// A message travels as one NATS message on its node's subject, framed as
//
//	source node, sequence, kind, from PID, to PID   uvarints
//	the body, by kind:
//	  message         the value, in payload's wire form
//	  call, reply     the call's number (uvarint), then the value
//	  signal          the signal's kind and reference (uvarints), quiet
//	                  (a byte), the reason (signals.go)
//
// Messages, calls and signals share one path and one numbering, so a
// process's messages and its end reach another node in the order they
// happened.
//
// Each node numbers what it sends to each other node, 1, 2, 3...: the
// number is taken and the message published under one lock, so the
// numbers follow the order of the publishes, which NATS keeps. The
// receiving node's subscription (one goroutine) expects each source's
// next number: a higher one means messages were lost between (a server
// that went away with them, a client buffer dropped) and counts them
// Lost; a lower or equal one is a duplicate, counted and dropped. So that
// a loss at the end of a stream is seen too, a node that sent to another
// follows up with a tick (a frame with no body, carrying the last number
// sent, taking none) on each of its next tickHeartbeats heartbeats: a
// tick that arrives with a number past the last one received reveals the
// loss. (A stream whose tail and every tick are lost has lost its
// connection for as long: the node is down by then.)

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// outbound numbers the messages for each node (under mu, with the
// publish).
type outbound struct {
	mu    sync.Mutex
	seq   map[int]uint64 // node number → the last number sent to it
	ticks map[int]int    // node number → the ticks still to send it
}

// tickHeartbeats is how many heartbeats after its last message a node
// ticks to another.
const tickHeartbeats = 4

// inbound is, for each source node, the last number received: read and
// written by the delivering subscription's goroutine only.
type inbound struct {
	seq map[int]uint64
}

// The kinds of frames.
const (
	kindMessage = iota
	kindCall
	kindReply
	kindSignal
	kindTick // no body: a number that reveals a loss before it
)

// frame is a message's header.
type frame struct {
	source   int
	seq      uint64
	kind     uint64
	from, to scheduler.PID
}

// Forward publishes msg for process to on its node: the scheduler's
// Relay. A node that is not up is an error.
func (n *Node) Forward(from, to scheduler.PID, msg any) error {
	f := frame{kind: kindMessage, from: from, to: to}
	body := make([]byte, 0, 32)
	if c, ok := msg.(scheduler.RemoteCall); ok {
		f.kind, msg = kindCall, c.Value
		if c.Reply {
			f.kind = kindReply
		}
		body = binary.AppendUvarint(body, c.ID)
	}
	body, err := payload.AppendWire(body, msg)
	if err != nil {
		return err
	}
	return n.publish(f, body)
}

// Signal publishes a relation's signal for process sig.To on its node:
// the scheduler's Relay.
func (n *Node) Signal(sig scheduler.Signal) error {
	body, err := appendSignal(make([]byte, 0, 16), sig)
	if err != nil {
		return err
	}
	return n.publish(frame{kind: kindSignal, from: sig.From, to: sig.To}, body)
}

// publish numbers f for its node and publishes it with body.
func (n *Node) publish(f frame, body []byte) error {
	node := f.to.Node()
	if !n.up(node) {
		return fmt.Errorf("node %d is not up", node)
	}
	n.out.mu.Lock()
	defer n.out.mu.Unlock()
	if err := n.publishLocked(node, f, body); err != nil {
		return err
	}
	n.out.ticks[node] = tickHeartbeats
	return nil
}

// publishLocked numbers f and publishes it with body (under out.mu).
func (n *Node) publishLocked(node int, f frame, body []byte) error {
	f.source, f.seq = n.number, n.out.seq[node]+1
	buf := appendFrame(make([]byte, 0, 24+len(body)), f)
	if err := n.nc.Publish(n.subject(node), append(buf, body...)); err != nil {
		return err
	}
	n.out.seq[node] = f.seq // only once published: a refused one takes no number
	return nil
}

// tick sends a tick to each node this node sent to in its last
// tickHeartbeats heartbeats: the heartbeat goroutine's.
func (n *Node) tick() {
	n.out.mu.Lock()
	defer n.out.mu.Unlock()
	for node, left := range n.out.ticks {
		if left <= 1 {
			delete(n.out.ticks, node)
		} else {
			n.out.ticks[node] = left - 1
		}
		f := frame{source: n.number, seq: n.out.seq[node], kind: kindTick}
		n.nc.Publish(n.subject(node), appendFrame(nil, f)) // a node gone takes none: its NodeDown tells
	}
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
	if fields[0] > scheduler.MaxNode || fields[2] > kindTick {
		return frame{}, nil, false
	}
	return frame{int(fields[0]), fields[1], fields[2], scheduler.PID(fields[3]), scheduler.PID(fields[4])}, data, true
}

// deliver hands what was published for one of this node's processes to
// the scheduler (one goroutine per subscription: in order), counting what
// it cannot deliver and the gaps in each source's numbers.
func (n *Node) deliver(m *nats.Msg) {
	f, body, ok := readFrame(m.Data)
	if !ok {
		n.stats.malformed.Add(1)
		return
	}
	var msg any
	var sig scheduler.Signal
	var err error
	switch f.kind {
	case kindTick:
		if len(body) > 0 {
			err = errors.New("a tick with a body")
		}
	case kindSignal:
		sig, err = readSignal(body, f)
	case kindCall, kindReply:
		msg, err = readCall(body, f.kind == kindReply)
	default:
		msg, err = readValue(body)
	}
	if err != nil {
		n.stats.malformed.Add(1)
		return
	}
	if f.kind == kindTick {
		n.in.tick(n, f)
		return
	}
	if !n.in.next(n, f) {
		return
	}
	n.mu.RLock()
	s := n.sched
	n.mu.RUnlock()
	if f.kind == kindSignal {
		n.stats.signals.Add(1)
		s.HandleSignal(sig)
		return
	}
	if err := s.Send(f.from, f.to, msg); err != nil {
		n.stats.undeliverable.Add(1) // ended, never was, or its mailbox is full
		return
	}
	n.stats.delivered.Add(1)
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
// f is new (not a duplicate).
func (in *inbound) next(n *Node, f frame) bool {
	last := in.seq[f.source]
	switch {
	case f.seq <= last:
		n.stats.duplicates.Add(1)
		return false
	case f.seq > last+1:
		n.stats.lost.Add(f.seq - last - 1)
		n.logf("cluster: %d messages from node %d were lost on the way", f.seq-last-1, f.source)
	}
	in.seq[f.source] = f.seq
	return true
}

// tick checks a tick's number, the last its source sent here, against
// the last received: the messages between were lost.
func (in *inbound) tick(n *Node, f frame) {
	if last := in.seq[f.source]; f.seq > last {
		n.stats.lost.Add(f.seq - last)
		n.logf("cluster: the last %d messages from node %d were lost on the way", f.seq-last, f.source)
		in.seq[f.source] = f.seq
	}
}
