package scheduler

import (
	"context"
	"sync/atomic"

	"github.com/luarun/luarun/mpsc"
	"github.com/luarun/luarun/payload"
)

// Process states (docs/architecture.md, "Process states"). The state word holds one of these
// in its low bits and the wakeup flags above them; every change is a CAS.
//
//	Ready → Running      a worker takes it from a queue (a failed CAS means
//	                     the queue entry was stale: drop it)
//	Running → Blocked    the step yielded and waits for completions
//	Running → Idle       the step waits for messages
//	Running → Ready      the step asked to continue (requeued at the back)
//	Running → Done       the step finished, failed, or shutdown gave up
//	Blocked → Ready      a completion arrived (or a cancel)
//	Idle → Ready         a message, a completion or a cancel arrived
//	Blocked/Idle/Ready → Done   only Shutdown, at its deadline
//
// Whoever moves a process to Ready puts it in a queue; whoever moves it
// out of Ready owns it. A Ready process in no queue would hang, so every
// transition to Ready is followed by exactly one enqueue.
const (
	stateReady uint32 = iota
	stateRunning
	stateBlocked
	stateIdle
	stateDone

	stateMask = 0x7
	// flagWoken: a completion or cancel arrived while Running. The worker
	// sees it when the step ends and steps again instead of parking.
	flagWoken uint32 = 0x8
	// flagMessage: a message arrived while Running. It matters only if the
	// step ends waiting for messages; a Blocked process ignores it.
	flagMessage uint32 = 0x10
	// flagHosting: the Running process's step runs, or has run, another
	// process's step nested inside it (nested.go), which an event for it
	// must ask to step aside (releaseHost). Set by the worker running it
	// with a CAS that keeps the other flags; cleared with them when the
	// step ends (park, makeReady).
	flagHosting uint32 = 0x20
)

// proc is the scheduler's record of one process. Its fields are ordered
// so that the 4-byte ones pair up, and its once-set atomic flags share
// a word (flags): a proc fits the 352-byte size class (TestProcFits), a
// million idle processes 64 MB less than in the 416. It keeps no pointer
// to its Scheduler: a completion reaches it through its yieldRec's.
type proc struct {
	// state: see the table above. Written by workers and by wakers (Send,
	// Kill, completers), always by CAS except the final Done store.
	state atomic.Uint32
	// senders: Send calls between their Done check and their push. finish
	// waits for it to drop to 0 before it counts the undelivered messages,
	// so that every message Send accepted is either stepped or counted.
	senders atomic.Int32
	// flags: pflagKilled, pflagMailboxWarned, pflagSlowReported and
	// pflagWaited (below), each set once (setFlag), never cleared.
	flags atomic.Uint32
	// backlog: the messages the process said it holds unread after its
	// last step (StepOutput.Backlog); owned by the worker running it, as
	// the fields after outstanding are.
	backlog int32

	// events: completions, messages and cancels, pushed by any goroutine,
	// drained by the worker that runs the process.
	events mpsc.Queue[Event]
	// stub is the queue's first dummy node. Once popped it is never
	// recycled (drain, finish): a free node is reused by other processes'
	// queues, and one inside p would keep p, and through p's last node
	// the process before it, alive for good.
	stub mpsc.Node[Event]

	// mailbox: messages accepted by Send and not yet taken by the process
	// (queued in events, or held in its Backlog); see limits.go. Added to
	// by senders, subtracted from by the worker running the process.
	mailbox atomic.Int64
	// mailboxOver: when the mailbox reached the warning's threshold or
	// the process last took messages after (unix ns; 0: not over); see
	// limits.go.
	mailboxOver atomic.Int64
	// cancelled: the first Kill or Shutdown cancel (set once, by CAS);
	// finish counts the process's end by it.
	cancelled atomic.Pointer[cancelInfo]
	// grace: the context of the commands the process yields after
	// Shutdown cancelled it (commandContext), made on first use; a child
	// of the scheduler's grace, cancelled when the process ends or is
	// killed.
	grace atomic.Pointer[graceContext]
	// rel: its monitors, links and names (links.go); nil until first used.
	rel atomic.Pointer[relations]

	pid  PID
	impl Process
	// ctx: what its context (context(), a procContext) keeps; the
	// context is cancelled by Kill, the shutdown deadline, or the end.
	ctx ctxState
	// stopParent stops the kill SubmitOptions.Context's end would make
	// (killWhenDone); set before the process is in the table, called by
	// closeProcess.
	stopParent func() bool
	// parentReason: SubmitOptions.KillReason, for a process whose home
	// and the watchdog watch its parent context instead (parentHomed,
	// watchParent). Set before the process is in the table.
	parentReason func(error) error

	// Owned by the worker running the process (handed over by the state
	// CAS): the yields awaiting completion (and backlog, above).
	outstanding []*yieldRec
	firstRecs   [1]*yieldRec // outstanding's first array (arm)
	// handedFrom, handedMsg: a message handed straight to the process
	// (handed true) by a sender that found it waiting for messages
	// (worker.handOff), taken by drain before the queued events. Owned
	// like the fields above: the sender writes it while it holds the
	// process in Running, before making it Ready. Its sender and value
	// only, not a whole Event (64 bytes), so that a proc stays in its
	// size class (TestProcFits); handed sits with the bools, below.
	handedFrom PID
	handedMsg  any

	// done: nil until someone asks for the channel (Handle.Done, Wait),
	// then that channel; closedDone once the process has ended. Most
	// processes are never waited on, so most never make a channel.
	// Written by doneChan (CAS nil → new) and by finish (swap → closedDone).
	done atomic.Pointer[chan struct{}]
	// home: the goroutine that runs p from start to end (Run, home.go),
	// nil for a process the workers run. Set before p is in the table.
	home *home

	// Written once before done becomes closedDone.
	result payload.Payloads
	err    error

	// handed (above), handedCounted (the handed message is in the
	// mailbox count: limits.countsHandOff; owned as handed is),
	// parentHomed (see parentReason), interrupts (impl is an Interrupter,
	// which the context's cancel interrupts) and preempts (impl is a
	// Preempter: it may run nested, nested.go), set at Submit, share a
	// word.
	handed        bool
	handedCounted bool
	parentHomed   bool
	interrupts    bool
	preempts      bool
}

// The flags of proc.flags. pflagKilled: a Kill came, first or after
// Shutdown's cancel (it ends the grace of the commands).
// pflagMailboxWarned: the MailboxWarning was given. pflagSlowReported:
// the watchdog reported a slow step (SlowStep), once. pflagWaited:
// submitted with SubmitOptions.Waited (a handle's holder will look), so
// watched() without a done channel made for it. One word for the four,
// so that a proc fits the 352-byte size class (TestProcFits).
const (
	pflagKilled uint32 = 1 << iota
	pflagMailboxWarned
	pflagSlowReported
	pflagWaited
)

// flag reports whether p has flag f.
func (p *proc) flag(f uint32) bool { return p.flags.Load()&f != 0 }

// setFlag sets p's flag f and reports whether this call set it (it was
// not set before).
func (p *proc) setFlag(f uint32) bool { return p.flags.Or(f)&f == 0 }

// graceContext is a process's grace context and its cancel.
type graceContext struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// cancelInfo is why a process was cancelled.
type cancelInfo struct {
	reason     error
	atShutdown bool // by Shutdown, not Kill
	trapped    bool // a shutdown the process traps: its context runs on
}

// wake makes p runnable after an event was pushed to its queue. A message
// does not wake a Blocked process: it waits in the queue for the next step.
// w is the worker whose goroutine this is, if known (nil otherwise): p then
// becomes its runnext (worker.runnext) instead of going to the global
// queue.
func (s *Scheduler) wake(p *proc, message bool, w *worker) {
	for {
		st := p.state.Load()
		switch st & stateMask {
		case stateBlocked:
			if message {
				return
			}
			fallthrough
		case stateIdle:
			if p.state.CompareAndSwap(st, stateReady) {
				if w == nil {
					s.enqueue(p)
				} else {
					w.readied(p)
				}
				return
			}
		case stateRunning:
			flag := flagWoken
			if message {
				flag = flagMessage
			}
			if st&flag != 0 {
				return // an earlier waker's flag: it released a host too
			}
			if p.state.CompareAndSwap(st, st|flag) {
				if st&flagHosting != 0 {
					s.releaseHost(p) // p waits under a nested step: ask it to step aside
				}
				return
			}
		default: // Ready: queued, will drain the event. Done: gone.
			return
		}
	}
}

// closedDone is the done channel of every process that has ended.
var closedDone = func() *chan struct{} {
	c := make(chan struct{})
	close(c)
	return &c
}()

// doneChan returns a channel closed when p ends, making it on first use.
func (p *proc) doneChan() <-chan struct{} {
	if c := p.done.Load(); c != nil {
		return *c
	}
	c := make(chan struct{})
	if p.done.CompareAndSwap(nil, &c) {
		return c // markDone has not run yet: it will close c
	}
	return *p.done.Load() // another waiter's channel, or closedDone
}

// markDone publishes p's end: result and err are set before it, and
// a channel handed out by doneChan is closed exactly once.
func (p *proc) markDone() {
	if c := p.done.Swap(closedDone); c != nil {
		close(*c)
	}
	if p.home != nil {
		p.home.signal() // last: Run returns on it (home.go)
	}
}
