package scheduler

// Inline runs: a new process's first steps on the goroutine that submits
// it (SubmitOptions.Inline).
//
// A server that starts a process per request and waits for it (serve's
// http.serve) would otherwise hand every request to a worker and back:
// the submit wakes a parked worker (a futex), the worker steps the
// process, its end wakes the waiting goroutine. A handler that answers in
// one step — most do — pays two goroutine hand-offs for nothing. Inline,
// the submitting goroutine takes the new process out of Ready itself (the
// same CAS a worker makes, so it owns the process exactly as a worker
// would) and runs it with an inline worker, a worker struct that belongs
// to no worker goroutine, until it parks: ended, waiting for a completion
// or a message, or sent to the global queue. From then on it is an
// ordinary process: whatever wakes it queues it for the workers.
//
// Invariants:
//
//   - An inline worker is held by one goroutine at a time (taken from
//     free, given back after the run), so its events, StepOutput and free
//     lists are used by one goroutine, as a worker's are.
//   - Its one queue is its runnext, during a run of SubmitWith only: a
//     process that a send from such a step (StepOutput.Send) makes Ready
//     becomes the inline worker's runnext (readiedInline), and while the
//     submitted process waits (parked, not ended) the goroutine runs it
//     (runFollowUps), as a worker runs its runnext. A handler that calls
//     a store process thus runs the store's step and then its own last
//     step on the same goroutine: no worker is woken, and the waiting
//     goroutine is the one that runs. Once the submitted process has
//     ended, or after inlineFollowUps follow-ups, what is left goes to
//     the global queue: a handler that sends work to a process and
//     returns does not wait for that work's step. The watchdog takes an
//     inline worker's runnext from a step that runs on
//     (runnextOverdue), as it does a worker's, so nothing is stranded
//     behind a long step; without a watchdog, and in Run's homed steps
//     (whose goroutine has its own process to run: home.go), the woken
//     process goes to the global queue. A spawn from an inline step goes
//     to the global queue (submitRelated treats an inline worker as
//     none), and an inline worker is never a steal victim or in
//     watchdog.active.
//   - A follow-up's step runs on the submitting goroutine: a long one
//     delays what that goroutine does next (http.serve: the request's
//     answer, and its timeout, which the goroutine arms once the start
//     returns) by the step's length, as a long first step does. The
//     steps of a store answering calls are short; MaxStep bounds any.
//   - There are at most inlineSlots of them (twice the workers): past
//     that, Inline is ignored and the process is queued as usual, so the
//     steps running off the workers stay bounded.
//   - The watchdog watches their steps for SlowStep and MaxStep (a step
//     limit kills an inline process too); it never counts them as stuck
//     workers (a long inline step holds no queue and no worker).

import (
	"sync"
	"sync/atomic"
)

// inlineRuns is the scheduler's set of inline workers.
type inlineRuns struct {
	mu   sync.Mutex
	free []*worker // idle inline workers (under mu)
	made int       // inline workers made so far (under mu)
	// all: every inline worker made (copy on write under mu), for the
	// watchdog and Stats.
	all atomic.Pointer[[]*worker]
}

// inlineSlots is the most inline runs at once, per worker.
const inlineSlots = 2

// takeInline returns an idle inline worker, or nil if all are busy.
func (s *Scheduler) takeInline() *worker {
	in := &s.inline
	in.mu.Lock()
	defer in.mu.Unlock()
	if k := len(in.free); k > 0 {
		w := in.free[k-1]
		in.free = in.free[:k-1]
		return w
	}
	if in.made >= inlineSlots*len(s.workers) {
		return nil
	}
	w := s.newWorker(MaxWorkers + in.made)
	w.inline = true
	in.made++
	var next []*worker
	if old := in.all.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, w)
	in.all.Store(&next)
	return w
}

// putInline gives an inline worker back.
func (s *Scheduler) putInline(w *worker) {
	s.inline.mu.Lock()
	s.inline.free = append(s.inline.free, w)
	s.inline.mu.Unlock()
}

// inlineWorkers returns every inline worker made.
func (s *Scheduler) inlineWorkers() []*worker {
	if all := s.inline.all.Load(); all != nil {
		return *all
	}
	return nil
}

// runInline runs p, just submitted (Ready and in no queue), on w until
// it parks. It reports false if abandon took p first (it ended).
func (s *Scheduler) runInline(w *worker, p *proc) bool {
	if !p.state.CompareAndSwap(stateReady, stateRunning) {
		return false
	}
	s.stats.inline.Add(1)
	w.followUps = true
	w.runCaught(p)
	s.runFollowUps(w, p)
	w.followUps = false
	w.goingIdle()
	return true
}

// inlineFollowUps is how many processes an inline run's steps woke that
// the goroutine runs itself after it (runFollowUps): enough for a call
// and its reply (the callee's step, then the caller's), bounded so that
// the goroutine returns to its own work.
const inlineFollowUps = 4

// readiedInline places p, which a step on inline worker w has just made
// Ready, as w's runnext (the one it displaces, if any, goes to the
// global queue) during a SubmitWith's run; otherwise, or without a
// watchdog to take it from a long step, on the global queue.
func (w *worker) readiedInline(p *proc) {
	s := w.s
	if !w.followUps || s.watch.stop == nil {
		s.enqueue(p)
		return
	}
	if old := w.runnext.Swap(p); old != nil {
		s.enqueue(old)
	}
}

// runFollowUps runs, on inline worker w, the processes its steps woke
// (its runnext) while submitted, whose run this is, waits: up to
// inlineFollowUps of them. One still in runnext after that, or once
// submitted has ended, goes to the global queue.
func (s *Scheduler) runFollowUps(w *worker, submitted *proc) {
	for range inlineFollowUps {
		if submitted.state.Load()&stateMask == stateDone {
			break
		}
		p := w.takeRunnext()
		if p == nil {
			return
		}
		if p.state.CompareAndSwap(stateReady, stateRunning) {
			w.runCaught(p)
		}
	}
	if p := w.takeRunnext(); p != nil {
		s.enqueue(p)
	}
}

// homed is w if its queues may take the processes a step of it spawns,
// or nil (no worker, or an inline one: the global queue).
func (w *worker) homed() *worker {
	if w == nil || w.inline {
		return nil
	}
	return w
}
