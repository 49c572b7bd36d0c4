package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/luarun/luarun/deque"
	"github.com/luarun/luarun/mpsc"
	"github.com/luarun/luarun/payload"
)

// A worker is one goroutine running processes (the Go runtime's P).
//
// Finding work, in order (docs/architecture.md, "Workers and queues"): every 61st look the global
// queue first, so that a worker busy with local work cannot starve it; its
// own deque (LIFO, cache-warm); the global queue (taking a batch); half of
// a random victim's deque.
//
// Running a process: CAS Ready→Running (a failure means a stale queue
// entry), drain its events, Step (which may dispatch commands itself:
// StepOutput.Command), dispatch the yields, then park it. A
// completion that arrived during the step (flagWoken) makes the worker step
// it again at once, up to rerunBudget times, then send it to the back of
// the global queue so others get a turn (unless no other work is queued
// anywhere this worker would look first: then it keeps running it).
type worker struct {
	id    int
	s     *Scheduler
	local *deque.Deque[*proc]
	rng   *rand.Rand
	tick  uint32

	// Reused between steps. out is &outs[0], or &outs[1] while a nested
	// step runs (nested.go), with nestedEvents in events.
	events       []Event
	out          *StepOutput
	outs         [2]StepOutput
	nestedEvents []Event
	nesting      bool // a nested step runs (nested.go)
	nest         nestedRun

	// Free lists, worker-local: records of answered yields and queue nodes
	// freed by draining. Any process run here may reuse them.
	recs  []*yieldRec
	nodes []*mpsc.Node[Event]
	// nowRec: the record of a StepOutput.Command whose Dispatch has not
	// returned — one that panicked, if the step goes on or has ended
	// (settleNow).
	nowRec *yieldRec
	// stepping: the process whose Step runs now (set only around the call),
	// and drained the messages its step took (drain), for catchStep; the
	// owner's alone.
	stepping *proc
	drained  int

	stats workerStats
	watch stepWatch // what the watchdog sees of this worker (watchdog.go)

	// runnext: the process a step on this worker woke last, which this
	// worker runs next (Go's runnext). Written by the owner (wake, which
	// moves what it held to the deque, and findWork, which takes it); taken
	// by the watchdog when the owner's step runs on (runnextOverdue). No
	// thief steals it: a process that wakes another and then blocks — a
	// message handed on — keeps both on one core, with no other worker
	// woken for it.
	runnext atomic.Pointer[proc]
	// handed: a process a step on this worker handed a message to, held
	// Running for this worker to run next (handoff.go). Filled by the
	// owner alone (handOff: a load and a store, no CAS); emptied with a
	// Swap by whoever takes it: the owner (findWork), the watchdog when
	// the owner's step runs on (runnextOverdue), or Shutdown past its
	// deadline (abandonHanded). claimed: what findWork last took from it,
	// until claim; the owner's alone.
	handed  atomic.Pointer[proc]
	claimed *proc

	// inline: an inline worker (inline.go), run by whichever goroutine
	// holds it; no one else looks at its runnext, its one queue.
	inline bool
	// followUps: an inline run of SubmitWith is under way on this inline
	// worker, whose goroutine runs the processes its steps wake while
	// the submitted one waits (runFollowUps). Only that goroutine reads
	// or writes it.
	followUps bool
}

var (
	errSendOutsideStep  = errors.New("StepOutput.Send called outside Step")
	errSpawnOutsideStep = errors.New("StepOutput.Spawn called outside Step")
)

// errNothingToWaitFor ends a process whose step waits for a completion
// while it has no command in flight: it would otherwise wait forever.
var errNothingToWaitFor = errors.New("step waits for a command completion, but no command is in flight")

const (
	fairnessTick = 61
	publishEvery = 64 // steps between two publishCounts of a busy worker
	rerunBudget  = 16
	maxFreeNodes = 1024
	maxFreeRecs  = 1024
)

func (w *worker) loop() {
	defer w.s.workersDone.Done()
	for w.serve() {
	}
}

// serve is the worker's loop under one deferred catchStep: it returns
// true when a step panicked (the process ended with it; loop calls it
// again), false when the scheduler stops.
func (w *worker) serve() (caught bool) {
	defer w.catchStep(&caught)
	for {
		p := w.findWork()
		if p == nil {
			if p = w.findWorkIdle(); p == nil {
				return false
			}
		}
		if w.local.Len() > 0 {
			// A batch came with p (global queue or steal): let an idle
			// worker steal some. Not inside findWork: sleep calls it
			// holding idle.mu, which wakeOne takes.
			w.s.wakeIfNeeded()
		}
		if w.claim(p) {
			w.run(p)
		}
	}
}

func (w *worker) findWork() *proc {
	s := w.s
	// tick counts looks modulo fairnessTick (a compare, not a modulo:
	// its multiply was a sixth of findWork's time in a ping-pong).
	if w.tick++; w.tick == fairnessTick {
		w.tick = 0
	}
	switch w.tick {
	case 0:
		// The global queue first now and then, so local work cannot
		// starve it.
		if p := s.global.get(w, len(s.workers)); p != nil {
			w.stats.globalPops.Add(1)
			return p
		}
	case fairnessTick / 2:
		// And the oldest local process, so that processes waking each
		// other on this deque's LIFO end cannot starve the ones below.
		if p, ok := w.local.Steal(); ok {
			w.stats.localPops.Add(1)
			return p
		}
	}
	if p := w.takeHanded(); p != nil { // counted in handOffs, not as a pop
		w.claimed = p
		return p
	}
	if p := w.takeRunnext(); p != nil {
		w.stats.localPops.Add(1)
		return p
	}
	if p, ok := w.local.PopBottom(); ok {
		w.stats.localPops.Add(1)
		return p
	}
	if p := s.global.get(w, len(s.workers)); p != nil {
		w.stats.globalPops.Add(1)
		return p
	}
	return w.steal()
}

// takeRunnext takes the process in w's runnext, or nil (a load first:
// the swap is a write, and most looks find it empty).
func (w *worker) takeRunnext() *proc {
	if w.runnext.Load() == nil {
		return nil
	}
	return w.runnext.Swap(nil)
}

func (w *worker) steal() *proc {
	ws := *w.s.watch.active.Load() // the workers and the running helpers
	n := len(ws)
	if n == 1 {
		return nil
	}
	start := w.rng.IntN(n)
	for i := range n {
		v := ws[(start+i)%n]
		if v == w {
			continue
		}
		if got := v.local.StealHalfInto(w.local); got > 0 {
			w.stats.steals.Add(1)
			w.stats.stolen.Add(uint64(got))
			p, _ := w.local.PopBottom()
			return p
		}
	}
	return nil
}

// run steps p (which this worker owns: state Running) until it parks.
func (w *worker) run(p *proc) {
	s := w.s
	for budget := rerunBudget; ; budget-- {
		live, broken := w.stepSettle(p)
		if !live {
			return
		}
		rerun := budget > 0
		if !rerun && !w.inline && w.local.Len() == 0 && w.runnext.Load() == nil && w.handed.Load() == nil && s.global.n.Load() == 0 {
			// Nobody is waiting for a turn: sending p to the global
			// queue would only wake another worker to run it.
			rerun, budget = true, rerunBudget
		}
		if !w.park(p, rerun, broken) {
			return
		}
	}
}

// stepSettle runs one step of p and settles what it left: it ends p
// (live false), or dispatches its yields for park to follow. broken:
// drain left events behind (see drain).
func (w *worker) stepSettle(p *proc) (live, broken bool) {
	s := w.s
	broken, messages := w.drain(p)
	w.beginStep(p)
	w.drained = messages // for catchStep
	err := w.step(p)
	if !w.nesting {
		w.endHosting() // before park clears flagHosting
	}
	if w.stats.steps++; w.stats.steps%publishEvery == 0 {
		w.publishCounts() // a worker that reruns one process never looks for work
	}
	s.limits.took(p, messages, w.out.Backlog)
	if err != nil || w.out.Status == StatusDone {
		w.finish(p, err)
		return false, broken
	}
	if s.abandoning.Load() {
		s.endAbandoned(p) // its yields would only be voided
		return false, broken
	}
	if len(w.out.Yields) > 0 { // most steps of a messaging process yield none
		w.dispatch(p)
	}
	if w.out.Status == StatusYield && len(p.outstanding) == 0 {
		w.finish(p, errNothingToWaitFor)
		return false, broken
	}
	return true, broken
}

// maxDrain bounds the events one step takes. A process that has fallen
// behind (a receiver slower than its senders) would otherwise take its
// whole backlog, hundreds of thousands of events, into one step: the
// worker's event slice and the process's mailbox grow to tens of MB,
// copied as they grow, and the step runs for as long as the backlog
// takes. In batches, the rest waits in the queue, where it costs
// nothing more.
const maxDrain = 4096

// drain moves p's queued events into w.events, recycling the nodes, and
// retires the records of the completions among them; it counts the
// messages. It reports whether it stopped with events left: at a push
// still in progress (mpsc's broken chain), or after maxDrain events.
// Either way events may sit behind whose wakeups this worker has
// already consumed, so p must not park waiting for them (park queues it
// again).
func (w *worker) drain(p *proc) (broken bool, messages int) {
	last := len(w.events) // the last step's events: cleared below unless overwritten
	w.events = w.events[:0]
	if p.handed { // first: it came before anything queued (handoff.go)
		// Written in place: an Event built on the stack and copied in
		// would be read back with 16-byte loads across the 8-byte
		// stores that built it, which stalls store-to-load forwarding
		// (half of drain's time in a ping-pong, by perf).
		w.events = append(w.events, Event{})
		ev := &w.events[len(w.events)-1]
		ev.Type, ev.From, ev.Data = EventMessage, p.handedFrom, p.handedMsg
		if p.handedCounted {
			messages++
		}
		p.handedMsg, p.handed, p.handedCounted = nil, false, false
	}
	if last > len(w.events) { // not clear(): memclrHasPointers costs more for the usual one or two
		old := w.events[:last]
		for i := len(w.events); i < last; i++ {
			old[i] = Event{}
		}
	}
	for {
		if len(w.events) == maxDrain {
			return true, messages
		}
		ev, n, ok := p.events.Pop()
		if !ok {
			return p.events.Pending(), messages
		}
		if ev.Type == EventMessage {
			messages++
		}
		switch {
		case n == &p.stub: // part of p: kept by no one else (proc.stub)
		case len(w.nodes) < maxFreeNodes:
			w.nodes = append(w.nodes, n)
		default:
			nodePool.Put(n)
		}
		if r := ev.rec; r != nil {
			ev.rec = nil
			w.retire(p, r)
		}
		w.events = append(w.events, ev)
	}
}

// step calls p.impl.Step. A Go panic that escapes it is caught by the
// catchStep deferred around the loop that called run (serve, runCaught),
// not here: a defer on every step cost a Lua process's hop ~50
// instructions.
func (w *worker) step(p *proc) error {
	w.out.reset()
	w.out.w, w.out.p, w.out.self = w, p, p.pid
	w.stepping = p // for catchStep: only while Step runs
	err := p.impl.Step(w.events, w.out)
	w.stepping = nil
	w.out.w, w.out.p = nil, nil
	if w.nowRec != nil {
		w.settleNow()
	}
	return err
}

// catchStep is deferred once around a loop of runs (serve, runCaught).
// A Go panic that escaped a step (w.stepping set: p.impl.Step is on the
// stack) ends that process as if its Step had returned the panic as its
// error — the process's own (PanicHandler; a nil one is made a
// *PanicError: a panicked step is never a success) or a *PanicError —
// and the caller's loop goes on (*caught). A panic while no step runs on
// w is not recovered: a bug in the scheduler ends the program. One in
// scheduler code a step called into (an inline run's bookkeeping, on
// another worker inside this step) is recovered here, as the step's own,
// as it was when the step recovered its panics itself.
// runtime.Goexit in a step (recover gives nil) is let through.
func (w *worker) catchStep(caught *bool) {
	p := w.stepping
	if p == nil {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	w.stepping = nil
	w.endHosting() // a panic in a nested step or its caller's
	var err error
	if h, ok := p.impl.(PanicHandler); ok {
		err = h.StepPanicked(v) // here, where the panic's stack is still there to print
	}
	if err == nil {
		err = &PanicError{Where: fmt.Sprintf("process %d", p.pid), Value: v, Stack: debug.Stack()}
	}
	w.out.w, w.out.p = nil, nil
	if w.nowRec != nil {
		w.settleNow()
	}
	w.out.Yields = w.out.Yields[:0] // the step's requests die with it
	w.out.Status, w.out.Result = StatusDone, nil
	w.stats.steps++
	w.s.limits.took(p, w.drained, w.out.Backlog)
	w.finish(p, err)
	*caught = true
}

// runCaught is run under a catchStep of its own, for the callers that
// run a process outside a worker's loop (inline runs, homed steps, the
// watchdog's helpers).
func (w *worker) runCaught(p *proc) {
	var caught bool
	defer w.catchStep(&caught)
	w.run(p)
}

// dispatch hands each yield of the step to the dispatcher with a completer
// bound to p and that yield.
func (w *worker) dispatch(p *proc) {
	for i := range w.out.Yields {
		y := &w.out.Yields[i]
		w.s.dispatcher.Dispatch(w.call(p, w.arm(p, y.Tag), y.Command, y.Args))
	}
}

// call is the Call of a yield of p whose record r is armed.
func (w *worker) call(p *proc, r *yieldRec, command string, args payload.Payloads) Call {
	return Call{
		Completer: Completer{rec: r, gen: r.gen},
		PID:       p.pid,
		Command:   command,
		Args:      args,
		Ctx:       w.s.commandContext(p),
	}
}

// arm takes a record and a node for a new yield of p and makes the record
// answerable.
func (w *worker) arm(p *proc, tag uint64) *yieldRec {
	var r *yieldRec
	if k := len(w.recs); k > 0 {
		r = w.recs[k-1]
		w.recs = w.recs[:k-1]
	} else {
		r = &yieldRec{s: w.s}
	}
	if k := len(w.nodes); k > 0 {
		r.node = w.nodes[k-1]
		w.nodes = w.nodes[:k-1]
	} else {
		r.node = new(mpsc.Node[Event])
	}
	r.p, r.tag = p, tag
	r.answer.Store(answerNone) // a use that ended inside dispatchNow (a panic) may have left it awaited
	r.gen++
	r.idx = len(p.outstanding)
	if p.outstanding == nil {
		p.outstanding = p.firstRecs[:0] // most processes have one yield out at a time
	}
	p.outstanding = append(p.outstanding, r)
	// Publishes p, tag and node to the completer that wins the CAS.
	r.token.Store(r.gen)
	return r
}

// retire removes an answered record from p's outstanding set and recycles it.
func (w *worker) retire(p *proc, r *yieldRec) {
	last := len(p.outstanding) - 1
	moved := p.outstanding[last]
	p.outstanding[r.idx] = moved
	moved.idx = r.idx
	p.outstanding[last] = nil
	p.outstanding = p.outstanding[:last]
	r.p, r.node = nil, nil
	if len(w.recs) < maxFreeRecs {
		w.recs = append(w.recs, r)
	}
}

// park moves p out of Running after a step. It returns true if p must be
// stepped again now (an event arrived during the step and rerun allows it).
// broken (see drain) sends p to the back of the global queue: by the time
// it runs again the push in progress has most likely landed.
func (w *worker) park(p *proc, rerun, broken bool) bool {
	var target uint32
	switch w.out.Status {
	case StatusYield:
		target = stateBlocked
	case StatusReceive:
		target = stateIdle
	default: // StatusContinue
		target = stateReady
	}
	for {
		st := p.state.Load()
		woken := st&flagWoken != 0 || target == stateIdle && st&flagMessage != 0
		if woken && rerun && !broken {
			if p.state.CompareAndSwap(st, stateRunning) { // clear the flags, keep it
				return true
			}
			continue
		}
		next := target
		if woken || broken {
			next = stateReady
		}
		if p.state.CompareAndSwap(st, next) {
			if next == stateReady {
				w.s.enqueue(p) // the back of the global queue: others go first
			}
			if broken {
				// The push in progress may be a goroutine's on this P,
				// preempted between its swap and its link: let it run,
				// or this worker takes p again at once, finds the chain
				// still broken, and goes round without end (seen with
				// one P under -race: 1.5M empty steps in 3 s).
				runtime.Gosched()
			}
			return false
		}
	}
}

// finish ends p: voids its outstanding yields, closes it, publishes the
// result and forgets it.
func (w *worker) finish(p *proc, err error) {
	var result = w.out.Result
	if err != nil {
		result = nil
	}
	w.out.Result = nil
	w.publishCounts() // before the end is seen: a waiter's Stats counts p's steps
	w.s.finish(p, result, err)
}
