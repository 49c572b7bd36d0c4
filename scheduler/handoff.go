package scheduler

// The direct hand-off: a message sent from a step (StepOutput.Send) to
// a process that waits for messages (Idle) goes into that process's
// hands instead of through its event queue, and the process becomes
// the sending worker's runnext. It saves the queue node, its push and
// its pop on the path a ping-pong or a ring takes for every message.
//
// Invariants:
//
//   - The sender takes the receiver out of Idle with the CAS a worker
//     makes to run a process (Idle → Running), so it owns the process
//     as a worker would while it writes proc.handedEv: no worker, no
//     abandon (which takes only Ready, Blocked and Idle processes) and
//     no other sender can touch the field. Wakers that come meanwhile
//     find it Running and leave a flag, which the move to Ready drops:
//     a Ready process drains all its events when it runs.
//   - It then makes the process Ready and places it exactly as wake
//     does (worker.readied): every move to Ready is followed by exactly
//     one enqueue.
//   - Order per sender: an Idle process has taken every event whose
//     wakeup has happened (park never makes a process Idle with a
//     message it knows of unread), so every earlier message of this
//     sender has been taken; later ones go through the queue, which
//     drain reads after the handed message.
//   - Counting: the sender admitted the message (limits) before the
//     hand-off; drain counts it with the drained messages, and finish
//     counts it as dropped if the process ends without running again.

import "github.com/luarun/luarun/mpsc"

// handOff gives msg from process from to p if p waits for messages, and
// reports whether it did; if not, the caller queues it.
func (w *worker) handOff(p *proc, from PID, msg any) bool {
	if !p.state.CompareAndSwap(stateIdle, stateRunning) {
		return false
	}
	p.handedFrom, p.handedMsg = from, msg
	p.handed = true
	for { // wakers may have flagged it meanwhile
		st := p.state.Load()
		if p.state.CompareAndSwap(st, stateReady) {
			break
		}
	}
	w.readied(p)
	w.stats.handOffs.Store(w.stats.handOffs.Load() + 1) // only w writes it: no locked add
	return true
}

// readied places p, which a step on w has just made Ready, on w: as its
// runnext (Go's runnext) when a watchdog can take it from there should
// the step run on, else on w's deque.
func (w *worker) readied(p *proc) {
	if p.sendHome() {
		return
	}
	s := w.s
	if w.inline {
		w.readiedInline(p) // inline.go
		return
	}
	if s.watch.stop == nil { // no watchdog to take runnext from a long step
		w.local.PushBottom(p)
		s.wakeIfNeeded() // someone may steal it
		return
	}
	// p runs next here, most likely as soon as the waker blocks; only
	// the process it displaces is left for others to steal.
	if old := w.runnext.Swap(p); old != nil {
		w.local.PushBottom(old)
		s.wakeIfNeeded()
	}
}

// getNode is a queue node from w's free list, or from the pool (w nil,
// or its list empty).
func (w *worker) getNode() *mpsc.Node[Event] {
	if w != nil {
		if k := len(w.nodes); k > 0 {
			n := w.nodes[k-1]
			w.nodes = w.nodes[:k-1]
			return n
		}
	}
	return getNode()
}
