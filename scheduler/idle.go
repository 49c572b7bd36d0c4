package scheduler

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Idle workers: spinning, sleeping and waking (docs/architecture.md, "Workers and queues").
//
// A worker that finds no work spins: a few tight retries, then retries
// with runtime.Gosched, then it sleeps on a condition variable. Producers
// (anything that makes a process Ready, or moves work into a deque) call
// wakeIfNeeded after publishing the work.
//
// No lost wakeups. A producer publishes, then reads nspinning, then
// nsleeping. A worker stops spinning by decrementing nspinning, then,
// holding idleMu, increments nsleeping and re-checks every queue before it
// waits. All of these are sequentially consistent, so either the producer
// sees the worker (spinning or sleeping) or the worker's re-check sees the
// work. A producer that sees a spinning worker leaves the work to it: that
// worker will find it, or decrement nspinning and re-check.
//
// At most half of the workers that are not asleep spin (as in the Go
// runtime); the others go straight to sleep.
//
// Not every push wakes a sleeper. wakeOne first claims the single spinning
// slot (nspinning 0→1) for the worker it wakes; while anyone spins, further
// pushes wake nobody. A spinner that finds work stops spinning and, if it
// was the last one, wakes another to look for the rest (as the Go
// runtime's resetspinning does).
//
// Tokens. Signal wakes an arbitrary waiter, or one that is about to wait;
// wakeTokens counts wakeups handed out and not yet taken, so that exactly
// one sleeper leaves per wakeup and inherits the spinning slot.
type idle struct {
	// nspinning: workers looking for work without sleeping, plus a slot
	// claimed by wakeOne for the worker it wakes. Written by workers and
	// wakeOne; read by producers.
	nspinning atomic.Int32
	// nsleeping: workers under idleMu or waiting on cond. Written under mu;
	// read by producers without it.
	nsleeping atomic.Int32

	mu         sync.Mutex
	cond       sync.Cond
	wakeTokens int  // under mu
	stopping   bool // under mu: workers exit instead of sleeping
}

const (
	spinTight   = 4  // retries without yielding the thread
	spinGosched = 16 // retries (tight ones included) before sleeping
)

// wakeIfNeeded wakes a sleeping worker if nobody is spinning, or, if no
// worker sleeps, a helper the watchdog has parked (watchdog.go). Call it
// after publishing work.
func (s *Scheduler) wakeIfNeeded() {
	if s.idle.nspinning.Load() == 0 {
		if s.idle.nsleeping.Load() > 0 {
			s.wakeOne()
		} else if s.watch.parked.Load() > 0 {
			s.kickHelper()
		}
	}
}

func (s *Scheduler) wakeOne() {
	id := &s.idle
	if !id.nspinning.CompareAndSwap(0, 1) {
		return // someone is spinning and will find the work
	}
	id.mu.Lock()
	if int(id.nsleeping.Load()) > id.wakeTokens {
		id.wakeTokens++
		id.cond.Signal()
		s.stats.wakeups.Add(1)
	} else {
		id.nspinning.Add(-1) // nobody to hand the slot to
	}
	id.mu.Unlock()
}

// findWorkIdle looks for work until it finds some (returned) or the
// scheduler stops (nil). spinning says whether the caller already holds a
// spinning slot (a woken worker inherits one from wakeOne).
func (w *worker) findWorkIdle() *proc {
	w.goingIdle()
	id := &w.s.idle
	spinning := false
	for {
		if !spinning && w.maySpin() {
			id.nspinning.Add(1)
			spinning = true
		}
		if spinning {
			if p := w.spin(); p != nil {
				w.stopSpinning()
				return p
			}
			id.nspinning.Add(-1)
		}
		p, stop, woken := w.sleep()
		if p != nil {
			if woken {
				w.stopSpinning()
			}
			return p
		}
		if stop {
			return nil
		}
		spinning = woken // a woken worker inherits wakeOne's spinning slot
	}
}

// maySpin: like the Go runtime, keep spinners to at most half of the
// workers not asleep. A spinner holds a thread (and here a P) that the
// goroutines feeding the scheduler need too.
func (w *worker) maySpin() bool {
	id := &w.s.idle
	awake := int32(len(w.s.workers)) - id.nsleeping.Load()
	return 2*id.nspinning.Load() < awake
}

// spin looks for work spinGosched times, yielding the thread after the
// first spinTight tries.
func (w *worker) spin() *proc {
	for i := range spinGosched {
		if i >= spinTight {
			runtime.Gosched()
		}
		if p := w.findWork(); p != nil {
			return p
		}
	}
	return nil
}

// stopSpinning gives up the caller's spinning slot after it found work; the
// last spinner to leave wakes another worker, since a burst of work rarely
// comes one item at a time.
func (w *worker) stopSpinning() {
	if w.s.idle.nspinning.Add(-1) == 0 {
		w.s.wakeIfNeeded()
	}
}

// sleep blocks until woken. It returns work found by a re-check, or stop
// if the scheduler is stopping; woken says it took a wakeup token and so
// holds a spinning slot.
func (w *worker) sleep() (p *proc, stop, woken bool) {
	id := &w.s.idle
	id.mu.Lock()
	defer id.mu.Unlock()
	id.nsleeping.Add(1)
	defer id.nsleeping.Add(-1)
	for {
		p = w.findWork()
		if p == nil && id.stopping {
			return nil, true, false
		}
		// Whoever leaves first takes a pending token, with or without
		// work: the signal that came with it may have been ours, and a
		// token nobody takes keeps its spinning slot claimed, so that
		// producers would wake nobody. (With work in hand, the caller
		// gives the slot straight back through stopSpinning.)
		if id.wakeTokens > 0 {
			id.wakeTokens--
			woken = true
		}
		if p != nil || woken {
			return p, false, woken
		}
		w.s.stats.parks.Add(1)
		id.cond.Wait()
	}
}

// stopWorkers wakes every worker and tells them to exit once idle.
func (s *Scheduler) stopWorkers() {
	s.idle.mu.Lock()
	s.idle.stopping = true
	s.idle.cond.Broadcast()
	s.idle.mu.Unlock()
}
