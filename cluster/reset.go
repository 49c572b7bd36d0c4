package cluster

// A lost connection is lost on both sides.
//
// Links and monitors between the processes of two nodes are kept in
// halves, one on each node (scheduler/remote.go). When a node decides
// that its connection with another was lost, it fires its halves with
// noconnection (scheduler.NodeDown); the other node must drop its halves
// too, or a link would be left with one end: a process whose partner's
// end will never come. Erlang has the same rule: a lost connection is a
// nodedown on both sides.
//
// A node decides the connection with node P was lost when
//   - P's heartbeats stopped (noticeDown), and then P beats again: P may
//     never have seen this node go quiet (the silence was one-way, or
//     short), or
//   - frames from P were lost (a gap in P's numbers, or a tick past the
//     last received): a signal among them would leave a relation half
//     made or half ended.
//
// It then sends P a reset, on the numbered path like any frame, so P
// reads it after everything this node sent before, and fires its own
// halves (NodeDown; in the heartbeat case it did when it found P silent).
// The reset goes first, and this node's own monitor and link requests
// to P are refused from before it until NodeDown is done (and, in the
// heartbeat case, from the look that found P silent until its NodeDown
// is done): a request numbered before the reset has both halves fired,
// P's on reading the reset and this node's by NodeDown; one made in the
// window fails at once with noconnection; one after it belongs to the
// new connection on both sides. P, on reading the reset, fires its
// halves (NodeDown), looks up its names (checkNames) and answers with a
// reset ack.
//
// A reset and an ack carry the last number their sender received from
// the other node. Until P says it received this node's latest reset —
// in an ack, or in a reset of its own (P may have lost this node's reset
// in a gap, and reset it in turn: its NodeDown then came after this
// node's reset too) — and while P is down, this node refuses the
// monitor and link requests P sent: P fires their halves when it reads
// the reset, or, for a request P made after its NodeDown, when this
// node's answer comes: a down or an exit with noconnection, as for a
// request to a node that is down. A reset or an ack that is lost is a
// gap, and starts another.
//
// Names too: a node that found this one down may have taken over names
// of this node's processes (names.go). On a reset this node looks up the
// keys of the names it holds and lets go of those that name another
// process now (checkNames).
//
// The cost: relations made across the two nodes in the moment between
// one side's decision and the other's reading of the reset fire with
// noconnection too, as they would in Erlang when a connection drops
// while they are being made.

import "github.com/luarun/luarun/scheduler"

// reset is the value of a reset frame, or of its ack: upTo is the last
// number its sender received from the other node (0: not known).
type reset struct {
	ack  bool
	upTo uint64
}

// connectionLost resets the connection with node source: frames from it
// were lost. The delivering goroutine's.
func (n *Node) connectionLost(s *scheduler.Scheduler, source int) {
	n.logf("cluster: frames from node %d were lost: its links and monitors with this node fire with noconnection on both nodes", source)
	// this node's requests to it are refused from before the reset until
	// NodeDown is done: one made between would be numbered after the
	// reset (kept there) and fired here
	n.out.resetting(source, +1)
	n.sendReset(source, n.in.of(source).seq) // first: what this node numbers after it is the new connection's
	s.NodeDown(source)
	n.out.resetting(source, -1)
}

// sendReset sends node a reset carrying upTo, and refuses its monitor
// and link requests until it answers.
func (n *Node) sendReset(node int, upTo uint64) {
	n.mu.Lock()
	p := n.peers[node]
	if p != nil {
		p.resetsGoing++ // refuse from now: the number comes below
	}
	n.mu.Unlock()
	seq, err := n.out.addNumbered(n.number, 0, scheduler.NodePID(node, 0), reset{upTo: upTo})
	if err != nil {
		n.logf("cluster: reset the connection with node %d: %v", node, err)
	}
	if p != nil {
		n.mu.Lock()
		p.resetsGoing--
		p.resetSeq = max(p.resetSeq, seq)
		n.mu.Unlock()
	}
}

// handleReset carries out a reset from f.source, or its ack; upTo is
// the last number f.source received from this node. The delivering
// goroutine's.
func (n *Node) handleReset(s *scheduler.Scheduler, f frame, upTo uint64) {
	n.mu.Lock()
	if p := n.peers[f.source]; p != nil {
		p.ackedUpTo = max(p.ackedUpTo, upTo)
	}
	n.mu.Unlock()
	if f.kind == kindResetAck {
		return
	}
	n.logf("cluster: node %d lost its connection with this node: links and monitors with it fire with noconnection", f.source)
	s.NodeDown(f.source)
	n.checkNames() // it may have taken over names of this node's processes meanwhile
	if err := n.out.add(n.number, 0, scheduler.NodePID(f.source, 0), reset{ack: true, upTo: n.in.of(f.source).seq}); err != nil {
		n.logf("cluster: answer the reset of node %d: %v", f.source, err)
	}
}

// refuseStale answers a monitor or link request from a node that has
// not yet read this node's reset, or is down, with a down or an exit
// with noconnection, and reports whether it did: its node fires its
// half on that answer, or on the reset, whichever comes first.
func (n *Node) refuseStale(sig scheduler.Signal) bool {
	if sig.Kind != scheduler.SignalMonitor && sig.Kind != scheduler.SignalLink {
		return false
	}
	n.mu.RLock()
	p := n.peers[sig.From.Node()]
	stale := p != nil && p.refusing()
	n.mu.RUnlock()
	if !stale {
		return false
	}
	answer := scheduler.Signal{Kind: scheduler.SignalExit, From: sig.To, To: sig.From, Reason: scheduler.ErrNoConnection}
	if sig.Kind == scheduler.SignalMonitor {
		answer.Kind, answer.Ref = scheduler.SignalDown, sig.Ref
	}
	n.out.add(n.number, sig.To, sig.From, answer) // a node gone takes none: its NodeDown fires the half
	return true
}

// refusing reports whether p's monitor and link requests are refused:
// it is down, or has not answered this node's latest reset (under
// Node.mu).
func (p *peer) refusing() bool {
	return p.down || p.resetsGoing > 0 || p.resetSeq > p.ackedUpTo
}
