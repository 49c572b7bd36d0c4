package scheduler

// The direct hand-off: a message sent from a step (StepOutput.Send) to
// a process that waits for messages (Idle) goes into that process's
// hands instead of through its event queue, and the process runs next
// on the sending worker, already its own. It saves, on the path a
// ping-pong or a ring takes for every message, the queue node with its
// push and pop, the mailbox count, and three of the four state changes
// a wake costs (Idle → Ready → Running): each a LOCK-prefixed
// instruction, which drains the store buffer of a core busy writing the
// Lua stack.
//
// Invariants:
//
//   - The sender takes the receiver out of Idle with the CAS a worker
//     makes to run a process (Idle → Running), so it owns the process
//     as a worker would while it writes proc.handedMsg: no worker, no
//     abandon (which takes only Ready, Blocked and Idle processes) and
//     no other sender can touch the field, and the process cannot end
//     (so the send needs no proc.senders announcement). Wakers that come
//     meanwhile find it Running and leave a flag; the step that follows
//     drains their events.
//   - The process stays Running in the sender's worker's handed slot
//     (worker.handed): whoever takes it from there owns it. The worker
//     takes it as its next process (findWork: no CAS, w.claimed); the
//     watchdog takes it if the sender's step runs on (runnextOverdue),
//     makes it Ready and queues it; past Shutdown's deadline, abandon
//     takes it and ends it (abandonHanded). A slot already full (a second
//     hand-off in one step), an inline or homed process, or a scheduler
//     without a watchdog (no one to take it from a long step) makes it
//     Ready and places it as wake does (worker.readied) instead: every
//     move to Ready is followed by exactly one enqueue. The slot and
//     runnext are one "next" as Go's runnext is: a process the slot
//     takes moves what waits in runnext to the deque (where the
//     fairness looks of findWork reach it), as a newer wake would.
//   - Order per sender: an Idle process has taken every event whose
//     wakeup has happened (park never makes a process Idle with a
//     message it knows of unread), so every earlier message of this
//     sender has been taken; later ones go through the queue, which
//     drain reads after the handed message.
//   - Counting: where the send counts it (limits.countsHandOff: always
//     with a MaxMailbox; with a warning alone, once the mailbox is one
//     short of the threshold), the sender admitted the message (limits)
//     before the hand-off, and drain counts it with the drained messages
//     (proc.handedCounted); otherwise it is never in the count. finish
//     counts it as dropped if the process ends without running again.

import "github.com/luarun/luarun/mpsc"

// handOff gives msg from process from to p if p waits for messages, and
// reports whether it did; if not, the caller queues it. counted: the
// caller admitted msg to p's mailbox count (limits.countsHandOff).
func (w *worker) handOff(p *proc, from PID, msg any, counted bool) bool {
	// A load first: a receiver busy with others' messages fails the CAS,
	// and a failed LOCK CMPXCHG costs what a successful one does.
	if p.state.Load() != stateIdle || !p.state.CompareAndSwap(stateIdle, stateRunning) {
		return false
	}
	p.handedFrom, p.handedMsg = from, msg
	p.handed, p.handedCounted = true, counted
	w.stats.handOffs++ // plain: the owner's (workerStats)
	if w.inline || p.home != nil || w.s.watch.stop == nil || w.handed.Load() != nil {
		w.readied(makeReady(p))
		return true
	}
	// A store, not a CAS: only this worker fills its slot (the watchdog
	// and abandon only empty it), so the slot seen empty stays empty until
	// this store, which also publishes handedFrom and handedMsg to them.
	w.handed.Store(p)
	// The slot runs before runnext (findWork): what waits in runnext
	// goes to the deque, as a newer wake would send it there, or a pair
	// handing messages back and forth through the slot would keep it
	// waiting for good.
	if old := w.takeRunnext(); old != nil {
		w.local.PushBottom(old)
		w.s.wakeIfNeeded()
	}
	return true
}

// makeReady moves p, which the caller holds in Running, to Ready, dropping
// the flags wakers left (a Ready process drains all its events when it
// runs), and returns it for the caller to queue.
func makeReady(p *proc) *proc {
	for {
		st := p.state.Load()
		if p.state.CompareAndSwap(st, stateReady) {
			return p
		}
	}
}

// takeHanded takes the process waiting in w's handed slot, Running and
// now the caller's, or nil (a load first: the swap is a write).
func (w *worker) takeHanded() *proc {
	if w.handed.Load() == nil {
		return nil
	}
	return w.handed.Swap(nil)
}

// claim makes p, which findWork returned, the caller's to run: a process
// from the handed slot is already (w.claimed); any other must move from
// Ready to Running (a failed CAS means a stale queue entry: drop it).
func (w *worker) claim(p *proc) bool {
	if p == w.claimed {
		w.claimed = nil
		return true
	}
	return p.state.CompareAndSwap(stateReady, stateRunning)
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
