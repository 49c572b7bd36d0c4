package scheduler

// Links, monitors and kills across nodes.
//
// A relation between a process of this node and one of another is kept
// on both sides, as a local one is (links.go), and the two sides talk by
// Signals that the Relay carries on the same ordered path as messages:
// a process's messages and then its end reach another node in the order
// they happened, so a down never overtakes the last message.
//
//   - Monitor of a remote target: the watcher's node makes the reference
//     (references carry the node's bits, as PIDs do, so references of
//     different nodes never collide in a target's watchers), notes the
//     monitor in its index of remote relations (remotes) and sends
//     SignalMonitor. The target's node adds the remote watcher to the
//     target's relations, or answers SignalDown with ErrNoProcess. When
//     the target ends, endRelations delivers to the watcher as to any, and
//     deliver turns the down into a SignalDown for its node.
//   - Link with a remote process: each side holds the other's PID in its
//     links and notes the pair in remotes; SignalLink asks the other side
//     to do the same (or to answer SignalExit with ErrNoProcess), and an
//     end sends SignalExit. An exit is delivered only while the link is
//     still held: after an unlink, nothing.
//   - Kill of a remote process is SignalKill; its reason crosses with it.
//
// remotes indexes, by the other node, this node's watchers of remote
// targets and its links with remote processes: what NodeDown must fire
// when the Relay finds a node gone. Taking an entry out of remotes (under
// its mutex) is the right to deliver it, so a down or exit that a signal
// and NodeDown both bring is delivered once. NodeDown leaves the remote
// watchers of this node's processes in their relations: they cost a
// failed signal when the target ends.

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNoConnection is the reason of a down or exit whose process is on a
// node that went away (Erlang's noconnection).
var ErrNoConnection = errors.New("noconnection")

// SignalKind says what a Signal asks or tells.
type SignalKind uint8

// The signals between nodes. From and To are the PIDs of the processes;
// To's node receives it.
const (
	SignalMonitor   SignalKind = iota + 1 // From monitors To with Ref (Quiet: MonitorQuietly)
	SignalDemonitor                       // From drops its monitor Ref of To
	SignalDown                            // From, monitored by To with Ref, ended with Reason
	SignalLink                            // From links to To
	SignalUnlink                          // From unlinks from To
	SignalExit                            // From, linked to To, ended with Reason
	SignalKill                            // From asks To to end with Reason
)

// Signal is a relation's message between processes of two nodes.
type Signal struct {
	Kind     SignalKind
	From, To PID
	Ref      uint64 // the monitor (SignalMonitor, SignalDemonitor, SignalDown)
	Quiet    bool   // SignalMonitor: a quiet monitor
	// Reason is how From ended (SignalDown, SignalExit) or why To should
	// (SignalKill): nil (normal), ErrNoProcess, ErrShutdown,
	// ErrNoConnection, or any error, which the Relay carries as it can.
	Reason error
}

// link is a link between a process of this node and a remote one.
type link struct{ local, remote PID }

// remoteMonitor is a monitor this node's watcher holds on a remote target.
type remoteMonitor struct{ watcher, target PID }

// remotes is this node's index of its relations with other nodes' processes.
type remotes struct {
	mu       sync.Mutex
	monitors map[int]map[uint64]remoteMonitor // target's node → ref → monitor
	links    map[int]map[link]struct{}        // remote's node → links
}

func (r *remotes) addMonitor(ref uint64, m remoteMonitor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := m.target.Node()
	if r.monitors == nil {
		r.monitors = map[int]map[uint64]remoteMonitor{}
	}
	if r.monitors[node] == nil {
		r.monitors[node] = map[uint64]remoteMonitor{}
	}
	r.monitors[node][ref] = m
}

// takeMonitor removes monitor ref of a target on node and reports whether
// it was there.
func (r *remotes) takeMonitor(node int, ref uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.monitors[node][ref]
	delete(r.monitors[node], ref)
	return ok
}

func (r *remotes) addLink(l link) {
	r.mu.Lock()
	defer r.mu.Unlock()
	node := l.remote.Node()
	if r.links == nil {
		r.links = map[int]map[link]struct{}{}
	}
	if r.links[node] == nil {
		r.links[node] = map[link]struct{}{}
	}
	r.links[node][l] = struct{}{}
}

func (r *remotes) takeLink(l link) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.links[l.remote.Node()][l]
	delete(r.links[l.remote.Node()], l)
	return ok
}

func (r *remotes) hasLink(l link) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.links[l.remote.Node()][l]
	return ok
}

// takeNode removes and returns every relation with node's processes.
func (r *remotes) takeNode(node int) (map[uint64]remoteMonitor, map[link]struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ms, ls := r.monitors[node], r.links[node]
	delete(r.monitors, node)
	delete(r.links, node)
	return ms, ls
}

// isRemote reports whether pid names a process of another node that a
// Relay can reach.
func (s *Scheduler) isRemote(pid PID) bool {
	return s.relay != nil && pid&^localMask != s.nodeBits
}

// newRef returns a monitor reference unique in the cluster: this node's
// bits over its count.
func (s *Scheduler) newRef() uint64 {
	return uint64(s.nodeBits) | s.nextRef.Add(1)&localMask
}

// monitorRemote is Monitor of a target on another node.
func (s *Scheduler) monitorRemote(watcher, target PID, ref uint64, quiet bool) {
	s.remote.addMonitor(ref, remoteMonitor{watcher, target})
	err := s.relay.Signal(Signal{Kind: SignalMonitor, From: watcher, To: target, Ref: ref, Quiet: quiet})
	if err != nil && s.remote.takeMonitor(target.Node(), ref) {
		s.deliver(watcher, Event{Type: EventDown, Tag: ref, From: target, Error: ErrNoConnection})
	}
}

// demonitorRemote is Demonitor of a target on another node.
func (s *Scheduler) demonitorRemote(target PID, ref uint64) {
	if s.remote.takeMonitor(target.Node(), ref) {
		s.relay.Signal(Signal{Kind: SignalDemonitor, To: target, Ref: ref}) // a node that is down holds nothing
	}
}

// linkRemote is Link of local process a with b on another node: the
// index entry, a's side, then the request. If the entry is gone once
// the request has left — NodeDown took it (and fired a's side), a ended
// (its exit left before the request), or b's exit came back — b's side,
// if the request made one, must not outlive a's: an exit follows the
// request (to an ended b, it finds nothing).
func (s *Scheduler) linkRemote(a *proc, b PID) error {
	l := link{a.pid, b}
	s.remote.addLink(l)
	if !a.addLink(b) {
		s.remote.takeLink(l)
		return fmt.Errorf("link %d: %w", a.pid, ErrNoProcess)
	}
	if err := s.relay.Signal(Signal{Kind: SignalLink, From: a.pid, To: b}); err != nil {
		if s.remote.takeLink(l) && a.removeLink(b) {
			s.deliver(a.pid, Event{Type: EventExit, From: b, Error: ErrNoConnection})
		}
		return nil
	}
	if !s.remote.hasLink(l) {
		reason := ErrNoConnection
		if s.table.get(a.pid) == nil {
			reason = ErrNoProcess // a's own reason left before the request
		}
		s.relay.Signal(Signal{Kind: SignalExit, From: a.pid, To: b, Reason: reason})
	}
	return nil
}

// unlinkRemote is Unlink of local process a from b on another node.
func (s *Scheduler) unlinkRemote(a, b PID) {
	if s.remote.takeLink(link{a, b}) {
		s.relay.Signal(Signal{Kind: SignalUnlink, From: a, To: b})
	}
}

// killRemote is Kill of a process on another node: it fails only when
// the signal cannot leave (the node is not up), as Erlang's exit/2 does
// not wait to learn whether the process exists.
func (s *Scheduler) killRemote(pid PID, reason error) error {
	if err := s.relay.Signal(Signal{Kind: SignalKill, To: pid, Reason: reason}); err != nil {
		return fmt.Errorf("kill %d on node %d: %w", pid, pid.Node(), err)
	}
	return nil
}

// deliverRemote is deliver to a process of another node: a down or an
// exit from one of this node's processes, sent as a signal. It reports
// whether the signal left.
func (s *Scheduler) deliverRemote(to PID, ev Event) bool {
	sig := Signal{From: ev.From, To: to, Reason: ev.Error}
	switch ev.Type {
	case EventDown:
		sig.Kind, sig.Ref = SignalDown, ev.Tag
	case EventExit:
		sig.Kind = SignalExit
		s.remote.takeLink(link{ev.From, to}) // the link ends with its local side
	default:
		return false
	}
	return s.relay.Signal(sig) == nil
}

// HandleSignal carries out a signal from another node for a process of
// this one: the Relay calls it, in the order the signals and messages of
// a process were sent.
func (s *Scheduler) HandleSignal(sig Signal) {
	switch sig.Kind {
	case SignalMonitor:
		s.monitorLocal(sig.From, sig.To, sig.Ref, sig.Quiet)
	case SignalDemonitor:
		s.Demonitor(sig.To, sig.Ref)
	case SignalDown:
		if s.remote.takeMonitor(sig.From.Node(), sig.Ref) {
			s.deliver(sig.To, Event{Type: EventDown, Tag: sig.Ref, From: sig.From, Error: sig.Reason})
		}
	case SignalLink:
		// the entry first: a process that ends once its side is there
		// finds the entry to take (endRelations), or none is left behind
		l := link{sig.To, sig.From}
		s.remote.addLink(l)
		if p := s.table.get(sig.To); p != nil && p.addLink(sig.From) {
			return
		}
		if s.remote.takeLink(l) {
			s.deliver(sig.From, Event{Type: EventExit, From: sig.To, Error: ErrNoProcess})
		}
	case SignalUnlink:
		if p := s.table.get(sig.To); p != nil {
			p.removeLink(sig.From)
		}
		s.remote.takeLink(link{sig.To, sig.From})
	case SignalExit:
		s.remote.takeLink(link{sig.To, sig.From})
		if p := s.table.get(sig.To); p != nil && p.removeLink(sig.From) {
			s.deliver(sig.To, Event{Type: EventExit, From: sig.From, Error: sig.Reason})
		}
	case SignalKill:
		s.Kill(sig.To, sig.Reason) // a process that has ended cannot be told
	}
}

// NodeDown fires every monitor and link this node's processes hold on
// processes of node, with ErrNoConnection: the Relay calls it when node
// has gone away. Signals from node that come after it find nothing to
// fire.
func (s *Scheduler) NodeDown(node int) {
	monitors, links := s.remote.takeNode(node)
	for ref, m := range monitors {
		s.deliver(m.watcher, Event{Type: EventDown, Tag: ref, From: m.target, Error: ErrNoConnection})
	}
	for l := range links {
		if p := s.table.get(l.local); p != nil && p.removeLink(l.remote) {
			s.deliver(l.local, Event{Type: EventExit, From: l.remote, Error: ErrNoConnection})
		}
	}
}
