package luaproc

// The table of remote ends (remotewait.go): what this runtime knows of
// the processes its processes started on other nodes with spawn_on, by
// the processes' PIDs, until process.wait hands their results over.
//
// An end may come before spawn_on has the PID (the answer and the end
// travel on different paths), so an end with no entry makes one; such an
// entry is unclaimed until spawn_on's request claims it. A request that
// fails on this side (its timeout passed, its process was killed) may
// still have started the process there, whose end then comes for a PID
// nobody here knows. So the requests in flight are numbered (begin,
// finish): an end with no entry is kept only if some request is in
// flight, noted with the number of the last request begun; once every
// request up to that number has finished, none can claim it, and it is
// removed.
//
// Invariants (all under mu): an entry's result is set once, and done
// closed then; an entry is in unclaimed iff its waiter is 0 and it is
// no orphan; an entry is removed when process.wait hands its result
// over, when its waiter ends (or never got the PID: release) if its end
// has come, else when its end comes (orphan), and, unclaimed, when the
// last request that may claim it finishes.

import (
	"math"
	"sync"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// remoteEnd is what this runtime knows of a process one of its
// processes started on another node.
type remoteEnd struct {
	waiter scheduler.PID // 0 until spawn_on has the PID
	done   chan struct{} // closed when result is set
	result payload.Payloads
	// orphan: its waiter ended first; the entry goes when the end comes
	// (the collector's monitor brings it, at the latest as noconnection)
	orphan bool
}

// remoteEnds are the ends of the processes this runtime's processes
// started on other nodes, by the processes' PIDs, and the runtime's
// process that hears them (endsProcess).
type remoteEnds struct {
	collector scheduler.PID
	mu        sync.Mutex
	ends      map[scheduler.PID]*remoteEnd
	// the spawn_on requests in flight, by number; begun is the last
	// number given
	requests map[uint64]struct{}
	begun    uint64
	// unclaimed: the entries made by an end that came before any
	// spawn_on claimed them, each with the last request begun then
	unclaimed map[scheduler.PID]uint64
}

// entry is pid's entry, made if it has none (under mu).
func (r *remoteEnds) entry(pid scheduler.PID) *remoteEnd {
	e := r.ends[pid]
	if e == nil {
		if r.ends == nil {
			r.ends = map[scheduler.PID]*remoteEnd{}
		}
		e = &remoteEnd{done: make(chan struct{})}
		r.ends[pid] = e
	}
	return e
}

// of returns pid's entry if waiter started it.
func (r *remoteEnds) of(pid, waiter scheduler.PID) *remoteEnd {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.ends[pid]; e != nil && e.waiter == waiter {
		return e
	}
	return nil
}

// begin numbers a spawn_on request about to be sent; finish(number)
// must follow, after the request's PID, if any, was claimed.
func (r *remoteEnds) begin() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.requests == nil {
		r.requests = map[uint64]struct{}{}
	}
	r.begun++
	r.requests[r.begun] = struct{}{}
	return r.begun
}

// finish notes that request number is answered (or failed), and
// removes the unclaimed entries no request in flight may claim.
func (r *remoteEnds) finish(number uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.requests, number)
	oldest := uint64(math.MaxUint64)
	for n := range r.requests {
		oldest = min(oldest, n)
	}
	for pid, last := range r.unclaimed {
		if last < oldest {
			delete(r.unclaimed, pid)
			delete(r.ends, pid)
		}
	}
}

// claim makes waiter the one to which pid's end goes (spawn_on has its
// PID).
func (r *remoteEnds) claim(pid, waiter scheduler.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entry(pid).waiter = waiter
	delete(r.unclaimed, pid)
}

// end sets pid's result, once. Without an entry it makes one if make_
// (the end itself, not a down) and a request that may have started pid
// is in flight; else nobody could take it.
func (r *remoteEnds) end(pid scheduler.PID, result payload.Payloads, make_ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends[pid] == nil {
		if !make_ || len(r.requests) == 0 {
			return
		}
		if r.unclaimed == nil {
			r.unclaimed = map[scheduler.PID]uint64{}
		}
		r.unclaimed[pid] = r.begun
	}
	e := r.entry(pid)
	if e.orphan {
		delete(r.ends, pid)
		return
	}
	select {
	case <-e.done:
	default:
		e.result = result
		close(e.done)
	}
}

// take removes pid's entry once its result is handed over.
func (r *remoteEnds) take(pid scheduler.PID, e *remoteEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends[pid] == e {
		delete(r.ends, pid)
	}
}

// dropWaiter removes the entries of waiter, which ended: those whose
// end has come at once, the others when it comes (an end that came
// later would make an entry nobody takes).
func (r *remoteEnds) dropWaiter(waiter scheduler.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid, e := range r.ends {
		if e.waiter == waiter {
			r.drop(pid, e)
		}
	}
}

// release is dropWaiter for pid alone: its spawn_on's answer never
// reached waiter (it ended while the request was out).
func (r *remoteEnds) release(pid, waiter scheduler.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.ends[pid]; e != nil && e.waiter == waiter {
		r.drop(pid, e)
	}
}

// drop removes e, pid's entry, if its end has come, else makes it an
// orphan (under mu).
func (r *remoteEnds) drop(pid scheduler.PID, e *remoteEnd) {
	select {
	case <-e.done:
		delete(r.ends, pid)
	default:
		e.waiter, e.orphan = 0, true
	}
}

// count is how many entries the table holds (tests).
func (r *remoteEnds) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ends)
}
