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
//   - Not on an inline worker (it has no slot), nor once Shutdown has
//     begun: processes then end as their steps return, one by one.

// nestedBudget is how many nested steps one step may run.
const nestedBudget = 8

// nestedRun is the reply slot of a nested step: written by the send of
// the nested step (takeReply), read by RunHanded after it, on the
// worker's goroutine.
type nestedRun struct {
	caller    *proc // the process whose step runs the nested one
	replied   bool
	replyFrom PID
	replyMsg  any
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
	if w == nil || w.nesting || o.nestedLeft == 0 || w.s.closing.Load() {
		return 0, nil, false, false
	}
	q := w.takeHanded()
	if q == nil {
		return 0, nil, false, false
	}
	o.nestedLeft--
	w.runNested(o.p, q)
	n := &w.nest
	from, msg, replied = n.replyFrom, n.replyMsg, n.replied
	n.replyFrom, n.replyMsg, n.replied = 0, nil, false
	return from, msg, true, replied
}

// runNested runs one step of q, taken from the handed slot, inside the
// step of caller.
func (w *worker) runNested(caller, q *proc) {
	top, topEvents := w.out, w.events
	w.nesting, w.nest.caller = true, caller
	w.out, w.events = &w.outs[1], w.nestedEvents
	defer func() { // the caller's step goes on: restore it whatever happened
		w.nestedEvents = w.events
		w.out, w.events = top, topEvents
		w.nesting, w.nest.caller = false, nil
		w.beginStep(caller)
	}()
	if live, broken := w.stepSettle(q); live {
		w.park(q, false, broken)
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
