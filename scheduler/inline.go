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
//   - It has no queue that anyone looks at: a send or spawn from its step
//     (StepOutput.Send, Spawn) goes to the global queue (send and
//     submitRelated treat an inline worker as none), and it is never a
//     steal victim or in watchdog.active. Nothing can be stranded on it.
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
	w.run(p)
	w.goingIdle()
	return true
}

// homed is w if its queues may take the processes a step of it wakes or
// spawns, or nil (no worker, or an inline one: the global queue).
func (w *worker) homed() *worker {
	if w == nil || w.inline {
		return nil
	}
	return w
}
