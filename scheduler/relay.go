package scheduler

// Processes on other nodes.
//
// A PID names its node: its high bits (nodeShift and up) are the number
// of the node that handed it out, its low bits that node's own count.
// A scheduler that runs alone is node 0, so its PIDs are the plain counts
// 1, 2, 3... they always were; one that runs in a cluster takes its node
// number from its Relay, and every PID it hands out carries it. A PID
// fits in 53 bits (nodeShift + nodeBits), so a Lua number holds it
// exactly, and it stays valid — names the same process — on every node.
//
// Routing is one comparison: a PID whose node bits are not this
// scheduler's goes to the Relay (cluster/ implements it over NATS), which
// carries the message to its node, whose Relay hands it to that node's
// scheduler with Send. Without a Relay such a PID names no process. The
// table (table.go) holds only this node's processes and answers nil for
// a PID of another node; Kill, Monitor, Link and their kin send a Signal
// through the Relay instead (remote.go).
//
// A call between nodes crosses as a RemoteCall: the runtime's own call
// type is a Go pointer that stays on its node, so the caller numbers the
// call and the answer comes back as a RemoteCall with the same number.

import "fmt"

const (
	nodeShift = 39 // a node hands out 2^39 (5.5·10^11) PIDs
	nodeBits  = 14
	localMask = 1<<nodeShift - 1
)

// MaxNode is the largest node number a Relay may have.
const MaxNode = 1<<nodeBits - 1

// Node is the number of the node that handed out p (0: a scheduler that
// runs alone).
func (p PID) Node() int { return int(p >> nodeShift) }

// NodePID is the PID that node n handed out as its local number local.
func NodePID(n int, local uint64) PID { return PID(n)<<nodeShift | PID(local&localMask) }

// Relay carries messages to processes on other nodes. The scheduler calls
// it from any goroutine, a worker's included: Forward must not block
// for long (queue the message and return).
type Relay interface {
	// Node is this node's number, 1 to MaxNode: the scheduler puts it in
	// every PID it hands out. It must not change.
	Node() int
	// Forward carries msg, a payload value (payload.Check), from process
	// from on this node to process to on node to.Node(), keeping the order
	// of the messages between any two processes. An error (the node is
	// not in the cluster, or not reachable) is the sender's.
	Forward(from, to PID, msg any) error
	// Signal carries a relation's signal (remote.go) to sig.To's node, on
	// the same ordered path as the messages of sig.From, and hands it to
	// that node's HandleSignal. An error: the node is not reachable.
	Signal(sig Signal) error
}

// forward is send for a PID of another node.
func (s *Scheduler) forward(from, to PID, msg any) error {
	if s.relay == nil {
		return fmt.Errorf("send to %d: %w", to, ErrNoProcess)
	}
	if err := s.relay.Forward(from, to, msg); err != nil {
		return fmt.Errorf("send to %d on node %d: %w", to, to.Node(), err)
	}
	s.stats.forwarded.Add(1)
	return nil
}

// RemoteCall is a call, or its reply, between processes of two nodes, as
// a Relay carries it (a message whose value is a RemoteCall arrives as
// one). The runtime on each side turns it into its own call.
type RemoteCall struct {
	ID    uint64 // the caller's number for the call; the reply has the same
	Reply bool   // the answer, not the request
	Value any    // the request or the answer, a payload value
}

// NameReleaser is a Relay that keeps names beyond this node (a cluster's
// registry): it hears of every name a process of this node gives up, by
// ending or by Unregister, after the scheduler released it. It is called
// from the ending process's worker: it must not block.
type NameReleaser interface {
	ReleaseNames(pid PID, names []string)
}

// releaseNames tells the relay, if it keeps names, that pid gave up names.
func (s *Scheduler) releaseNames(pid PID, names []string) {
	if nr, ok := s.relay.(NameReleaser); ok && len(names) > 0 {
		nr.ReleaseNames(pid, names)
	}
}
