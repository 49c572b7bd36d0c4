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
// It then fires its halves (NodeDown; the heartbeat case did already)
// and sends P a reset, on the numbered path like any frame, so P reads
// it after everything this node sent before. P fires its halves with
// this node (NodeDown) and answers with a reset ack. Until the ack
// comes, this node drops the monitor and link requests P sent before it
// read the reset: P fires their halves when it reads it. What P sent
// after the reset — the ack and everything behind it — is of the new
// connection. A reset or an ack that is lost is itself a gap, and
// starts another.
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

// reset is the value of a reset frame, or of its ack.
type reset struct{ ack bool }

// connectionLost fires this node's halves of the relations with node
// source and sends it a reset: frames from it were lost. The delivering
// goroutine's.
func (n *Node) connectionLost(s *scheduler.Scheduler, source int) {
	n.logf("cluster: frames from node %d were lost: its links and monitors with this node fire with noconnection on both nodes", source)
	s.NodeDown(source)
	n.sendReset(source)
}

// sendReset sends node a reset and drops its monitor and link requests
// until the ack comes.
func (n *Node) sendReset(node int) {
	n.mu.Lock()
	if p := n.peers[node]; p != nil {
		p.awaitingAck = true
	}
	n.mu.Unlock()
	if err := n.out.add(n.number, 0, scheduler.NodePID(node, 0), reset{}); err != nil {
		n.logf("cluster: reset the connection with node %d: %v", node, err)
	}
}

// handleReset carries out a reset from f.source (it fires this node's
// halves of the relations with it and answers) or its ack.
func (n *Node) handleReset(s *scheduler.Scheduler, f frame) {
	if f.kind == kindResetAck {
		n.mu.Lock()
		if p := n.peers[f.source]; p != nil {
			p.awaitingAck = false
		}
		n.mu.Unlock()
		return
	}
	n.logf("cluster: node %d lost its connection with this node: links and monitors with it fire with noconnection", f.source)
	s.NodeDown(f.source)
	n.checkNames() // it may have taken over names of this node's processes meanwhile
	if err := n.out.add(n.number, 0, scheduler.NodePID(f.source, 0), reset{ack: true}); err != nil {
		n.logf("cluster: answer the reset of node %d: %v", f.source, err)
	}
}

// staleRelation reports whether sig is a monitor or link request that
// its node sent before it read this node's reset: its node fires its
// half when it reads it, so this node makes none.
func (n *Node) staleRelation(sig scheduler.Signal) bool {
	if sig.Kind != scheduler.SignalMonitor && sig.Kind != scheduler.SignalLink {
		return false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	p := n.peers[sig.From.Node()]
	return p != nil && p.awaitingAck
}
