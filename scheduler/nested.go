package scheduler

// Nested steps: a process about to wait for a message, in a step that
// handed a message to a process waiting in this worker's handed slot
// (handoff.go), runs that process's step at once, inside its own
// (StepOutput.RunHanded), and takes the message the nested step sends
// back without waiting for a step of its own. A request and its reply —
// a ping-pong, a call to a server — then cost the caller no step: it
// neither ends its step nor starts another, and the worker does not
// look for work between the two.
//
// Invariants:
//
//   - One level: a nested step runs none (w.nesting), and one step runs
//     at most nestedBudget of them (StepOutput.nestedLeft); past that the
//     caller waits as usual, its step ends, and what came for it
//     meanwhile (a kill, the shutdown) is seen at its next step.
//   - A nested step is a step like any other (stepSettle, then park,
//     without a rerun) on the worker's second StepOutput and event
//     buffer: the caller's step output (its yields so far) and events are
//     untouched. The watchdog sees the nested process step, then the
//     caller start a new step: the caller's step time counts from its
//     last nested step (with the budget, a step lasts at most
//     nestedBudget+1 times what MaxStep allows).
//   - The reply: a message the nested step sends its caller, which is
//     Running and cannot be handed one, goes to w.nest instead of the
//     caller's queue when that queue holds nothing (so that it overtakes
//     no earlier message, which would be queued), the first one only
//     (later ones queue behind it, and RunHanded's caller takes the reply
//     before its next step drains the queue), and only where a hand-off
//     would not be counted (limits.countsHandOff). It counts as a hand-off.
//   - The caller is held: while the nested step runs, it is Running
//     with flagHosting, on this worker's stack, and cannot see what comes
//     for it. So the nested process must step aside when something does
//     — a message, a completion, a kill: wake, finding flagHosting, asks
//     it to (releaseHost: Preempter.Preempt, from the waker's goroutine),
//     and it yields at its next instruction that can (a Lua process:
//     luaproc/preempt.go), ending its step with StatusContinue: it is
//     queued to go on later, and the caller's receive returns without a
//     reply and waits as usual, so its step ends and the worker reruns
//     it for what came. Only a process that implements Preempter is run
//     nested, only when no event has come for the caller yet in its step
//     (flagWoken and flagMessage clear: it would not wait) nor waits in
//     its queue (drain stopped at maxDrain: no waker would come for
//     those), and only when the caller's step has yielded no command
//     (its dispatch waits for the step's end). What the nested process runs where it cannot
//     yield (a Lua metamethod, a comparator) holds the caller for as
//     long as it lasts; MaxStep bounds it, as it bounds any step.
//   - Wakers find the nested process through the worker running it
//     (nestedRun.host, .guest: atomic, stored before the worker reads
//     the caller's flags, so a waker whose flag it did not see finds
//     them), among the active workers. The flag and host stay until the
//     caller's step ends (host cleared first, then park clears the flag
//     with the others): a waker between two nested steps asks the last
//     guest, whose step has ended, to step aside. A waker that comes as a
//     nested step ends, or between two, may so ask a process after its
//     step: its next step ends early once and continues.
//   - A Go panic in the nested step ends the nested process alone (its
//     own catchStep, inside the caller's step); the caller's step goes on.
//   - Not on an inline worker (it has no slot), nor once Shutdown has
//     begun: processes then end as their steps return, one by one.

import "sync/atomic"

// nestedBudget is how many nested steps one step may run.
const nestedBudget = 8

// nestedRun is a worker's nested step: its caller and reply slot,
// written by the send of the nested step (takeReply), read by RunHanded
// after it, on the worker's goroutine; and host and guest, the caller
// and the nested process, for wakers on other goroutines (releaseHost).
type nestedRun struct {
	caller    *proc // the process whose step runs the nested one
	replied   bool
	replyFrom PID
	replyMsg  any
	// host, guest: written by the worker (guest, then host, before it
	// reads the caller's flags in host()), read by releaseHost on any
	// goroutine. host stays set from the caller's first nested step to
	// the end of its step (endHosting), not cleared between nested
	// steps: a waker between two of them asks the last guest, done with
	// its step, to step aside, and that guest's next step ends early
	// once (Preempter allows it). Cleared before park clears the
	// caller's flagHosting, so no waker finds a host that no longer is;
	// only one worker at a time names a process as its host.
	host, guest atomic.Pointer[proc]
}

// endHosting forgets the caller whose step ended (or panicked) on w.
func (w *worker) endHosting() {
	if w.nest.host.Load() != nil {
		w.nest.host.Store(nil)
	}
}

// Preempter is implemented by processes whose running step can be
// asked, from any goroutine, to end early at the next point where it
// can, returning StatusContinue, and to continue in a later step. Only
// such a process runs nested (nested.go). Preempt must not block; it may
// be called when no step runs, or after the step it was meant for has
// ended (that or a later step then ends early once).
type Preempter interface {
	Preempt()
}

// RunHanded is for a process that is about to wait for a message: if a
// process waits in this worker's handed slot (a message this step or an
// earlier one sent it was handed over), it runs one step of that
// process now, inside this step (ran), and returns the first message
// that step sent to this process, if it sent one it could hand over
// (replied: the caller must take it now, before anything else it
// receives). Otherwise, or if it may not (see nested.go), the caller
// waits as usual, and any message sent to it arrives with its next step.
// For use inside Step only.
func (o *StepOutput) RunHanded() (from PID, msg any, ran, replied bool) {
	w := o.w
	if w == nil || w.nesting || w.inline || o.nestedLeft == 0 || len(o.Yields) > 0 || w.s.closing.Load() {
		return 0, nil, false, false
	}
	q := w.handed.Load()
	if q == nil || !q.preempts {
		return 0, nil, false, false
	}
	// Events still queued (drain stopped at maxDrain) were pushed before
	// the step, and their wakes found the caller Ready: none would
	// release it. It takes them at its next step instead.
	if o.p.events.Pending() {
		return 0, nil, false, false
	}
	// Published before the caller's flag is read: a waker that sets the
	// flag after host() read it finds them (releaseHost). Stored only
	// when they change: a ping-pong's caller hosts the same guest step
	// after step, and each store is an XCHG.
	if w.nest.guest.Load() != q {
		w.nest.guest.Store(q)
	}
	if w.nest.host.Load() != o.p {
		w.nest.host.Store(o.p)
	}
	if !o.p.host() || w.handed.Swap(nil) != q { // an event came; or the watchdog took q (runnextOverdue)
		w.nest.host.Store(nil)
		return 0, nil, false, false
	}
	o.nestedLeft--
	w.runNested(o.p, q)
	n := &w.nest
	from, msg, replied = n.replyFrom, n.replyMsg, n.replied
	n.replyFrom, n.replyMsg, n.replied = 0, nil, false
	return from, msg, true, replied
}

// host marks p, Running, as hosting nested steps (flagHosting, left set
// until its step ends), unless an event has come for it during its step
// (it would not wait: a nested step would hold it for nothing).
func (p *proc) host() bool {
	for {
		st := p.state.Load()
		if st&(flagWoken|flagMessage) != 0 {
			return false
		}
		if st&flagHosting != 0 || p.state.CompareAndSwap(st, st|flagHosting) {
			return true
		}
	}
}

// runNested runs one step of q, taken from the handed slot, inside the
// step of caller, which host marked.
func (w *worker) runNested(caller, q *proc) {
	top, topEvents, drained := w.out, w.events, w.drained
	w.nesting, w.nest.caller = true, caller
	w.out, w.events = &w.outs[1], w.nestedEvents
	var caught bool
	defer func() { // the caller's step goes on: restore it whatever happened
		// host stays until the caller's step ends (endHosting).
		w.nestedEvents = w.events
		w.out, w.events = top, topEvents
		w.nesting, w.nest.caller = false, nil
		w.stepping, w.drained = caller, drained // for the caller's catchStep
		w.beginStep(caller)
	}()
	defer w.catchStep(&caught) // a panic of q's step ends q alone
	if live, broken := w.stepSettle(q); live {
		w.park(q, false, broken)
	}
}

// releaseHost asks the process whose step runs nested in host's (host
// had flagHosting when the caller set its own flag: see wake) to step
// aside, so that host's step ends and host sees what came for it.
func (s *Scheduler) releaseHost(host *proc) {
	for _, w := range *s.watch.active.Load() {
		if w.nest.host.Load() != host {
			continue
		}
		if q := w.nest.guest.Load(); q != nil {
			if pre, ok := q.impl.(Preempter); ok {
				pre.Preempt()
			}
		}
		return
	}
}

// takeReply keeps msg, sent from the nested step to its caller p, for
// RunHanded to return, and reports whether it did (see nested.go).
func (w *worker) takeReply(p *proc, from PID, msg any) bool {
	n := &w.nest
	if n.replied || p.events.Pending() {
		return false
	}
	n.replied, n.replyFrom, n.replyMsg = true, from, msg
	w.stats.handOffs++
	return true
}
