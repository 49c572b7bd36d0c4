package scheduler

// Homed runs: a process run from start to end by the goroutine that
// submitted it (Scheduler.Run), as a synchronous call.
//
// SubmitOptions.Inline runs a new process's first steps on the
// submitting goroutine; once the process waits for a command, the
// completion queues it for the workers, and the caller, waiting on its
// handle, is woken by the end. An embedder's request (start, call a Go
// command answered from another goroutine, answer) then pays two
// hand-offs more than it needs: completer → worker → waiting caller.
// A homed process has a home, the goroutine that submitted it and waits
// for it in Run: every move of the process to Ready signals the home
// instead of queueing the process, and the home runs the next steps
// itself, on an inline worker (inline.go), so a completion costs one
// hand-off (completer → caller), as a channel send would. Before it
// blocks, the home yields its P once (yieldFirst): a handler that
// answers from a goroutine it starts (go c.Complete(...)) has put that
// goroutine next in line on this P, which then runs it at once; its
// answer lands in the home's channel with no goroutine parked, readied
// and woken (no wakep of an idle P), and the home takes it without
// blocking, and without asking its parent context for the Done channel
// a cancelCtx makes on first use. An answer that takes longer costs one
// Gosched more before the home blocks as before. A command dispatched
// from inside the step (StepOutput.Command) gets the same Gosched there,
// before the step unwinds: the answer then comes back to the call
// itself, and the process does not yield at all.
//
// Invariants:
//
//   - "Every move to Ready is followed by exactly one enqueue" holds
//     with the signal as the enqueue: whoever makes a homed process
//     Ready (wake, a hand-off, park, the submit itself) signals its home
//     (home.signal) and queues it nowhere. The home then owns the
//     process's next run: it takes it Ready → Running, with the CAS a
//     worker makes, and runs it on an inline worker; if none is free it
//     puts it on the global queue (the one queue a homed process is ever
//     in), and a worker runs it as any process.
//   - ready holds at most one signal the home has not taken: one per
//     move to Ready (never two without a run between) and one from the
//     end (markDone). A signal the home takes when the process is
//     neither Ready nor ended (its end under way, or a stale one) makes
//     it wait again; nothing is lost, since the end signals last, after
//     the process's result is published. Ownership is always the state
//     CAS, never the signal: a stale signal (a recycled home's, below)
//     costs a look, and at worst a run of a process that is Ready
//     anyway.
//   - A homed process reaches the workers' queues only through the
//     global queue, put there by its home (then it is any Ready process
//     in a queue: a worker takes it with the CAS and runs it once, up to
//     its next park, which signals the home again); a step never makes
//     it another worker's runnext. Its inline steps are watched by the
//     watchdog as any inline step (SlowStep, MaxStep).
//   - Run returns only once the process has ended: a kill, a cancelled
//     parent context (SubmitOptions.Context), Shutdown or its deadline
//     all end it, and the end signals the home.

import (
	"runtime"
	"sync"

	"github.com/luarun/luarun/payload"
)

// home is the goroutine a homed process belongs to.
type home struct {
	ready chan struct{} // capacity 1: a move to Ready, or the end
}

// homes recycles homes (two allocations per Run). A recycled home may
// get a stale signal — a waker that made the previous process Ready
// just before Shutdown's abandon ended it, and signalled late — which
// costs its next Run a look at the state, as any stale signal does.
var homes = sync.Pool{New: func() any { return &home{ready: make(chan struct{}, 1)} }}

// signal tells the home that its process is Ready or has ended.
func (h *home) signal() {
	select {
	case h.ready <- struct{}{}:
	default: // one is pending: the home looks at the state when it takes it
	}
}

// sendHome signals p's home and reports true if p is homed; the caller
// has just made p Ready (and queues it nowhere else).
func (p *proc) sendHome() bool {
	if p.home == nil {
		return false
	}
	p.home.signal()
	return true
}

// Run submits p, as SubmitWith does with opts, and runs it on the
// calling goroutine until it ends: its steps run here, and while it waits
// for a completion or a message this goroutine waits too, and takes it
// up again when the event comes (no worker runs it, unless the inline
// runs are at their bound: inline.go). It returns the handle of the
// ended process (Result is valid) or SubmitWith's error; opts.Inline is
// implied. For a caller that would wait for the process anyway (an
// embedder's request). Never call it from a Step or a command handler:
// it blocks until the process ends.
func (s *Scheduler) Run(p Process, method string, input payload.Payloads, opts SubmitOptions) (Handle, error) {
	opts.Inline = false
	opts.home = homes.Get().(*home)
	defer opts.home.recycle()
	h, _, err := s.submitWith(nil, p, method, input, opts)
	if err != nil {
		return Handle{}, err
	}
	s.runHome(h.p)
	return h, nil
}

// recycle drops a signal left over (the end's, when the home returned
// on an earlier one) and puts h back in homes.
func (h *home) recycle() {
	select {
	case <-h.ready:
	default:
	}
	homes.Put(h)
}

// runHome runs p, homed here and just submitted (Ready, in no queue),
// until it has ended.
//
// It asks for the parent context's Done channel only when it first has
// to block: a run that ends in its first steps (its commands answered in
// their handlers) never makes the channel (watchParent). It looks for
// the end after each step before it blocks: the end's signal is then
// left for recycle, rather than taken by a select.
func (s *Scheduler) runHome(p *proc) {
	var parentDone <-chan struct{} // p's parent context, if the home watches it
	watching := p.parentHomed
	first := true
	for {
		if p.ended() {
			return
		}
		if p.state.Load()&stateMask == stateReady {
			s.homeStep(p, first)
			first = false
			if p.ended() {
				return
			}
		}
		if p.home.yieldFirst() {
			continue
		}
		if watching {
			parentDone, watching = p.ctx.values.Done(), false
		}
		select {
		case <-p.home.ready:
		case <-parentDone:
			s.parentDone(p) // then wait for its end
			parentDone = nil
		}
	}
}

// yieldFirst lets the goroutines this P has ready run before the home
// blocks, and reports whether its signal came meanwhile.
func (h *home) yieldFirst() bool {
	runtime.Gosched()
	select {
	case <-h.ready:
		return true
	default:
		return false
	}
}

// ended reports whether p's end has been published (markDone).
func (p *proc) ended() bool { return p.done.Load() == closedDone }

// homeStep runs p, Ready and signalled to its home, on an inline worker
// until it parks; or, with none free, queues it for the workers.
func (s *Scheduler) homeStep(p *proc, first bool) {
	iw := s.takeInline()
	if iw == nil {
		s.enqueueHomed(p)
		return
	}
	defer s.putInline(iw)
	if !p.state.CompareAndSwap(stateReady, stateRunning) {
		return // abandon took it: its end signals
	}
	if first {
		s.stats.inline.Add(1)
	}
	iw.runCaught(p)
	iw.goingIdle()
}

// enqueueHomed puts homed p, Ready, on the global queue, for a worker.
func (s *Scheduler) enqueueHomed(p *proc) {
	s.global.push(p)
	s.wakeIfNeeded()
}
