package scheduler

// Links, monitors and names: what a process's end tells others.
//
// Each process may have relations, made on first use and guarded by
// their own mutex: the monitors other processes hold on it (reference →
// watcher), the processes linked to it, and the names registered for it.
// When the process ends, finish closes its relations under that mutex and
// then
//
//   - releases its names (first, so that whoever hears of the end finds
//     them free);
//   - pushes an EventDown to every watcher and an EventExit to every
//     linked process, exactly once each. The ended process's messages were
//     pushed to their receivers' queues during its steps, before this, so
//     a receiver's queue holds them ahead of the down or exit (each event
//     queue keeps the order of its pushes: mpsc).
//   - makes those notices readable together (endNotices): all are placed
//     before any can be read, so whatever one recipient does on hearing
//     of the end reaches every other recipient after its own notice.
//
// Monitor, Link and Register take the same mutex: they either find the
// relations open (and finish will deliver) or closed (and answer at once:
// a down or exit with ErrNoProcess, or an error). So nothing is delivered
// twice, and nothing is lost.
//
// A quiet monitor (MonitorQuietly) is a monitor kept in callers rather
// than watchers: the same down, but it does not make the process watched,
// so its failure is still reported (watched). It is for a process that
// calls the target and only needs to know whether it is alive.
//
// Demonitor removes the monitor from its target. A down event that finish
// pushed before may still be queued: the watcher drops downs of monitors
// it no longer holds (it knows its own), which is why Demonitor leaves
// that to it.
//
// SubmitWith makes a process and links or monitors it before it is
// queued: it cannot have ended, so there is no gap in which it could end
// unnoticed (Erlang's spawn_link and spawn_monitor).

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/luarun/luarun/mpsc"
	"github.com/luarun/luarun/payload"
)

// Errors of names.
var (
	// ErrNameTaken: Register of a name another process holds.
	ErrNameTaken = errors.New("name is taken")
)

// relations are a process's monitors, links and names (under mu).
type relations struct {
	mu       sync.Mutex
	closed   bool           // the process has ended
	watchers map[uint64]PID // monitor reference → the watcher
	callers  map[uint64]PID // quiet monitors: reference → the watcher
	links    map[PID]struct{}
	names    []string
}

// endedRelations are the relations of every process that ended without
// having any: closed, and never written (every writer checks closed).
var endedRelations = &relations{closed: true}

// rels returns p's relations, making them on first use.
func (p *proc) rels() *relations {
	if r := p.rel.Load(); r != nil {
		return r
	}
	r := &relations{}
	if p.rel.CompareAndSwap(nil, r) {
		return r
	}
	return p.rel.Load()
}

// Monitor makes watcher receive an EventDown when target ends, and returns
// the monitor's reference (its Tag). If target does not exist or has
// ended, the down comes at once, with ErrNoProcess as its Error.
func (s *Scheduler) Monitor(watcher, target PID) uint64 {
	return s.monitor(watcher, target, false)
}

// MonitorQuietly is Monitor, except that the monitor does not count as
// watching target: if target fails, Options.OnCrash still hears of it.
// It is for a watcher that only needs to know whether target is alive,
// such as a process calling it.
func (s *Scheduler) MonitorQuietly(watcher, target PID) uint64 {
	return s.monitor(watcher, target, true)
}

func (s *Scheduler) monitor(watcher, target PID, quiet bool) uint64 {
	ref := s.newRef()
	if s.isRemote(target) {
		s.monitorRemote(watcher, target, ref, quiet) // remote.go
		return ref
	}
	s.monitorLocal(watcher, target, ref, quiet)
	return ref
}

// monitorLocal makes watcher (of any node) a watcher of target, a PID of
// this node, with ref; a target that is not there is a down at once.
func (s *Scheduler) monitorLocal(watcher, target PID, ref uint64, quiet bool) {
	if p := s.table.get(target); p != nil {
		r := p.rels()
		r.mu.Lock()
		if !r.closed {
			m := &r.watchers
			if quiet {
				m = &r.callers
			}
			if *m == nil {
				*m = map[uint64]PID{}
			}
			(*m)[ref] = watcher
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
	s.deliver(watcher, Event{Type: EventDown, Tag: ref, From: target, Error: ErrNoProcess})
}

// Demonitor removes monitor ref from target, if target still has it. A
// down event already on its way is the watcher's to drop.
func (s *Scheduler) Demonitor(target PID, ref uint64) {
	if s.isRemote(target) {
		s.demonitorRemote(target, ref)
		return
	}
	if p := s.table.get(target); p != nil {
		if r := p.rel.Load(); r != nil {
			r.mu.Lock()
			delete(r.watchers, ref)
			delete(r.callers, ref)
			r.mu.Unlock()
		}
	}
}

// Link links processes a and b: when either ends, the other gets an
// EventExit. If b does not exist or has ended, a gets it at once (with
// ErrNoProcess); if a has, Link fails with ErrNoProcess.
func (s *Scheduler) Link(a, b PID) error {
	pa := s.table.get(a)
	if pa != nil && s.isRemote(b) {
		return s.linkRemote(pa, b)
	}
	if pa == nil || !pa.addLink(b) {
		return fmt.Errorf("link %d: %w", a, ErrNoProcess)
	}
	if pb := s.table.get(b); pb != nil && pb.addLink(a) {
		return nil
	}
	pa.removeLink(b)
	s.deliver(a, Event{Type: EventExit, From: b, Error: ErrNoProcess})
	return nil
}

// Unlink removes the link between a and b, both ways.
func (s *Scheduler) Unlink(a, b PID) {
	if pa := s.table.get(a); pa != nil {
		pa.removeLink(b)
	}
	if s.isRemote(b) {
		s.unlinkRemote(a, b)
		return
	}
	if pb := s.table.get(b); pb != nil {
		pb.removeLink(a)
	}
}

// addLink records a link of p to other, unless p has ended.
func (p *proc) addLink(other PID) bool {
	r := p.rels()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.links == nil {
		r.links = map[PID]struct{}{}
	}
	r.links[other] = struct{}{}
	return true
}

// removeLink removes p's link to other and reports whether it had one.
func (p *proc) removeLink(other PID) bool {
	r := p.rel.Load()
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, had := r.links[other]
	delete(r.links, other)
	return had
}

// SubmitOptions relate a new process to an existing one (SubmitWith).
type SubmitOptions struct {
	Link    PID // link the new process to this one (0: none)
	Monitor PID // this process monitors the new one (0: none)
	// Waited: the caller holds the Handle to learn how the process ends,
	// as if it waited from the start, so a failure is never reported to
	// Options.OnCrash (which hears only of failures nobody watches).
	Waited bool
	// Inline: run the new process's first steps on the calling goroutine
	// (inline.go), so that SubmitWith returns once it has ended or waits
	// for something (an event then queues it for the workers as any
	// process). For a caller that would wait for it anyway, such as a
	// server's connection goroutine; ignored inside a step (SpawnWith)
	// and when the inline runs at once are at their bound.
	Inline bool
	// Context, if not nil, is the process's parent: the values of the
	// process's context (Init's, and every Call.Ctx of its commands) are
	// Context's, and when Context is done the process is killed, as Kill
	// does, with reason KillReason(context.Cause(Context)) (the cause
	// itself if KillReason is nil). Its own cancellation does not reach
	// the process's context otherwise: the kill is what ends it.
	Context    context.Context
	KillReason func(cause error) error

	home *home // set by Run (home.go)
}

// SubmitWith is Submit, then Link and Monitor as opts say, done before
// the new process can run. It returns the monitor's reference (0 without
// one).
func (s *Scheduler) SubmitWith(p Process, method string, input payload.Payloads, opts SubmitOptions) (Handle, uint64, error) {
	return s.submitWith(nil, p, method, input, opts)
}

// submitWith is SubmitWith; w is the calling worker if the caller runs on
// one.
func (s *Scheduler) submitWith(w *worker, p Process, method string, input payload.Payloads, opts SubmitOptions) (Handle, uint64, error) {
	var ref uint64
	inline := opts.Inline && w == nil // never inside a step
	h, err := s.submitRelated(w, p, method, input, &opts, func(pr *proc) error {
		if opts.Waited {
			pr.flags.Or(pflagWaited) // what watched() looks for
		}
		if opts.Link != 0 {
			owner := s.table.get(opts.Link)
			if owner == nil || !owner.addLink(pr.pid) {
				return fmt.Errorf("link %d: %w", opts.Link, ErrNoProcess)
			}
			pr.addLink(opts.Link)
		}
		if opts.Monitor != 0 {
			ref = s.newRef()
			r := pr.rels()
			r.mu.Lock()
			if r.watchers == nil {
				r.watchers = map[uint64]PID{}
			}
			r.watchers[ref] = opts.Monitor
			r.mu.Unlock()
		}
		return nil
	}, inline)
	return h, ref, err
}

// relate is what submitRelated does to a new process before it is
// queued.
type relate func(*proc) error

// endRelations closes p's relations (under their mutex: from here on
// Monitor, Link and Register see p ended) and tells the watchers and the
// linked processes, and releases p's names. err is how p ended.
func (s *Scheduler) endRelations(p *proc, err error) {
	// A process that never had relations gets the shared closed ones, so
	// that a Monitor, Link or Register racing its end (it is still in the
	// table) finds them closed instead of making open ones nobody closes.
	if p.rel.CompareAndSwap(nil, endedRelations) {
		return
	}
	r := p.rel.Load()
	r.mu.Lock()
	r.closed = true
	watchers, callers, links, names := r.watchers, r.callers, r.links, r.names
	r.watchers, r.callers, r.links, r.names = nil, nil, nil, nil
	r.mu.Unlock()
	s.names.release(p, names) // first: whoever hears of the end finds the name free
	s.releaseNames(p.pid, names)
	// The notices reach their recipients together: each is placed in its
	// recipient's queue, every recipient is woken, and only then can any
	// of them read its notice (mpsc.Reserve, Commit). So a recipient that
	// acts on its notice — tells another process, which asks a third —
	// cannot get ahead of another recipient's notice of the same end:
	// whatever it causes is queued behind that notice, and no hand-off
	// can slip in front of it (a woken recipient is not Idle). Delivered
	// one by one, a worker stopped between two deliveries let a job queue
	// hear of a crash through its monitor and finish the work before the
	// supervisor linked to the crashed process had its exit.
	var notices endNotices
	for ref, w := range watchers {
		notices.place(s, w, Event{Type: EventDown, Tag: ref, From: p.pid, Error: err})
	}
	for ref, w := range callers {
		notices.place(s, w, Event{Type: EventDown, Tag: ref, From: p.pid, Error: err})
	}
	for l := range links {
		if lp := s.table.get(l); lp != nil {
			lp.removeLink(p.pid)
		}
		notices.place(s, l, Event{Type: EventExit, From: p.pid, Error: err})
	}
	notices.release(s)
}

// endNotices holds the notices of one process's end placed in local
// queues but not yet readable, each recipient announced as a sender (so
// that none finishes meanwhile: finish waits for its senders).
type endNotices struct {
	remote []remoteNotice // to remote processes: signalled after release
	to     []endNotice
	inline [8]endNotice
}

type remoteNotice struct {
	to PID
	ev Event
}

type endNotice struct {
	p       *proc
	down    bool // wakes as a message (wake)
	pending mpsc.Reservation[Event]
}

// place puts ev in process to's queue, unreadable until release. A remote
// process's notice waits for release too, which signals it last: the
// relay's Signal may block (a cluster's outbound queue when full), and
// nothing local may wait on it with its notice unreadable. (So a remote
// recipient hears of the end after the local ones, and what it then does
// has no order against them: across nodes only each pair's order holds.)
// It reports false if a local to does not exist or has ended.
func (n *endNotices) place(s *Scheduler, to PID, ev Event) bool {
	if s.isRemote(to) {
		n.remote = append(n.remote, remoteNotice{to, ev})
		return true
	}
	p := s.table.get(to)
	if p == nil {
		return false
	}
	p.senders.Add(1) // finish counts what it drops once senders are out
	if p.state.Load()&stateMask == stateDone {
		p.senders.Add(-1)
		return false
	}
	node := getNode()
	node.Value = ev
	if n.to == nil {
		n.to = n.inline[:0]
	}
	n.to = append(n.to, endNotice{p: p, down: ev.Type == EventDown, pending: p.events.Reserve(node)})
	return true
}

// release wakes every recipient, then lets each read its notice. Woken
// first, a recipient is Ready or Running when its notice appears (one
// that runs before finds its queue's chain broken and is queued again,
// as for any push in progress: worker.drain).
func (n *endNotices) release(s *Scheduler) {
	for _, x := range n.to {
		s.wake(x.p, x.down, nil)
	}
	for _, x := range n.to {
		x.pending.Commit()
		x.p.senders.Add(-1)
	}
	for _, r := range n.remote {
		s.deliverRemote(r.to, r.ev) // remote.go
	}
}

// watched reports whether anything will hear of p's end: a monitor (not
// a quiet one), a link, or someone waiting on its handle (for crash
// reports).
func (p *proc) watched() bool {
	if p.flag(pflagWaited) || p.done.Load() != nil {
		return true
	}
	r := p.rel.Load()
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.watchers) > 0 || len(r.links) > 0
}

// deliver pushes ev to process to and wakes it: an exit as a completion
// would (whatever it waits for), a down as a message. It reports whether
// to was there to take it.
func (s *Scheduler) deliver(to PID, ev Event) bool {
	if s.isRemote(to) {
		return s.deliverRemote(to, ev) // remote.go
	}
	var one endNotices
	if !one.place(s, to, ev) {
		return false
	}
	one.release(s)
	return true
}
