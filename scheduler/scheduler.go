// Package scheduler runs processes — state machines that yield commands —
// on a fixed set of worker goroutines with work stealing.
//
// A Process is stepped by one worker at a time. Each step may yield
// commands; the scheduler hands each to a Dispatcher together with a
// Completer bound to that process and that yield, and the handler completes
// it now or later from any goroutine. The completion wakes the process onto
// a queue and some worker steps it again. Processes also receive messages
// (Send) and cancellations (Kill, Shutdown). Nothing here knows about Lua.
//
// From inside Step, a process sends and spawns through its StepOutput
// (out.Send, out.Spawn): the scheduler then knows the call runs on the
// worker, and the process it wakes or starts goes onto that worker's own
// deque instead of the global queue.
//
// Typical use:
//
//	reg := new(scheduler.Registry)
//	reg.Register("time.sleep", sleepHandler)
//	s := scheduler.New(scheduler.Options{Dispatcher: reg})
//	h, err := s.Submit(myProcess, "main", nil)
//	result, err := h.Wait(ctx)
//	err = s.Shutdown(ctx)
//
// docs/architecture.md describes the design: queues and stealing are in
// worker.go, queues.go and idle.go, the state machine in proc.go,
// completions in dispatch.go, a new process's first steps on the
// submitting goroutine (SubmitOptions.Inline) in inline.go, and a
// process run from start to end by the goroutine that submits it (Run)
// in home.go.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luarun/luarun/deque"
	"github.com/luarun/luarun/payload"
)

// Options configure a Scheduler. The zero value is a working scheduler:
// GOMAXPROCS workers, the default limits, the watchdog on.
type Options struct {
	// Workers is the number of worker goroutines; 0 means GOMAXPROCS.
	Workers int
	// Dispatcher receives every yield. nil fails every command as unknown.
	Dispatcher Dispatcher

	// MaxProcs bounds the live processes: a Submit beyond it fails with
	// ErrTooManyProcesses. 0 means DefaultMaxProcs; negative, no bound.
	MaxProcs int
	// MaxMailbox bounds the messages queued for one process and not yet
	// taken by it (StepOutput.Backlog): a Send beyond it fails with
	// ErrMailboxFull. 0 means no bound; then Warn hears once of each
	// process whose queue passes MailboxWarning. Negative: no bound and
	// no warning, and messages are not counted at all.
	MaxMailbox int
	// MailboxWarning is the queue length that draws the warning when
	// MaxMailbox is 0; 0 means DefaultMailboxWarning.
	MailboxWarning int

	// Slice is how long a step may run before the watchdog acts on it
	// (watchdog.go): the processes queued behind a busy worker are taken
	// by a free worker, or by a temporary extra one. 0 means
	// DefaultSlice; negative turns the watchdog off (and with it MaxStep
	// and SlowStep).
	Slice time.Duration
	// MaxStep kills a process whose step runs longer, in the CPU time it
	// was given, not wall time (watchdog.go; its error is a
	// *StepLimitError). 0: no limit.
	MaxStep time.Duration
	// SlowStep: a step running longer is reported, once per process
	// (SlowStepper, else Warn). 0 means DefaultSlowStep; negative: never.
	SlowStep time.Duration
	// Warn hears of mailboxes past MailboxWarning and of slow steps of
	// processes that are not SlowSteppers. It is called from senders'
	// and the watchdog's goroutines and must not block. nil: silence.
	Warn func(pid PID, msg string)
	// Relay, when set, makes this scheduler a node of a cluster: its PIDs
	// carry Relay.Node(), and sends to PIDs of other nodes go through it
	// (relay.go). nil: the scheduler runs alone (node 0).
	Relay Relay
	// OnCrash hears of a process that failed with an error of its own
	// while nothing links it, monitors it or waits on its handle (nobody
	// else would know), from the goroutine ending it, before its handle
	// is done. nil: nothing.
	OnCrash func(pid PID, err error)
}

// MaxWorkers is the most workers a Scheduler runs (Options.Workers above
// it means MaxWorkers): past a thousand, starting, waking and stopping
// them costs more than they can give on any machine.
const MaxWorkers = 1024

// Defaults of Options.
const (
	DefaultMaxProcs       = 1 << 20 // Erlang's default process limit
	DefaultMailboxWarning = 100_000
	DefaultSlice          = 10 * time.Millisecond // the Go runtime's preemption slice
	DefaultSlowStep       = time.Second
)

// Errors reported by the scheduler.
var (
	// ErrNoProcess: the PID does not exist or the process has ended.
	ErrNoProcess = errors.New("no such process")
	// ErrClosed: the scheduler is shutting down and takes no new processes.
	ErrClosed = errors.New("scheduler is shut down")
	// ErrShutdown is the cancel reason processes get from Shutdown.
	ErrShutdown = errors.New("scheduler shutting down")
	// ErrAbandoned ends processes still running at Shutdown's deadline.
	ErrAbandoned = errors.New("abandoned at shutdown deadline")
	// ErrProcessEnded is the cause of a process context cancelled because
	// the process ended normally (a failed process's error is the cause).
	ErrProcessEnded = errors.New("process ended")
	// ErrTooManyProcesses: Submit would pass Options.MaxProcs.
	ErrTooManyProcesses = errors.New("too many processes")
	// ErrMailboxFull: Send would pass Options.MaxMailbox.
	ErrMailboxFull = errors.New("mailbox full")
)

// Scheduler runs processes. Create one with New; it is safe for concurrent
// use.
type Scheduler struct {
	workers    []*worker
	global     globalQueue
	idle       idle
	table      table
	dispatcher Dispatcher
	limits     limits   // limits.go
	watch      watchdog // watchdog.go
	names      names    // names.go
	onCrash    func(pid PID, err error)
	relay      Relay   // nil: alone (relay.go)
	remote     remotes // relations with other nodes' processes (remote.go)
	nodeBits   PID     // this node's number, in place in a PID

	nextPID atomic.Uint64 // the count of PIDs handed out (their low bits)
	nextRef atomic.Uint64 // monitor references (links.go)
	// live: processes in the table and not yet ended. slots: processes
	// holding a place under MaxProcs (live, plus those in Submit).
	live, slots atomic.Int64
	closing     atomic.Bool // no new submissions
	abandoning  atomic.Bool // deadline passed: end processes after their step
	allDone     chan struct{}
	doneOnce    sync.Once
	// grace is the context of the commands a process yields after
	// Shutdown cancelled it (its own context is done by then): cleanup
	// I/O still runs, until the deadline. Cancelled by abandon.
	grace       context.Context
	cancelGrace context.CancelFunc

	workersDone sync.WaitGroup
	stats       schedStats
	inline      inlineRuns // inline.go

	abandonedMu sync.Mutex
	abandoned   []PID // ended at the deadline, by abandon or by their worker
}

// New starts a scheduler and its workers.
func New(opts Options) *Scheduler {
	n := opts.Workers
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	n = min(n, MaxWorkers)
	d := opts.Dispatcher
	if d == nil {
		d = new(Registry)
	}
	s := &Scheduler{dispatcher: d, allDone: make(chan struct{})}
	s.grace, s.cancelGrace = context.WithCancel(context.Background())
	s.limits = newLimits(opts)
	s.onCrash = opts.OnCrash
	if opts.Relay != nil {
		node := opts.Relay.Node() // (n is the worker count)
		if node < 1 || node > MaxNode {
			panic(fmt.Sprintf("scheduler: relay node %d is not in 1..%d", node, MaxNode))
		}
		s.relay, s.nodeBits = opts.Relay, NodePID(node, 0)
		s.table.node = s.nodeBits
	}
	s.idle.cond.L = &s.idle.mu
	s.workers = make([]*worker, n)
	for i := range s.workers {
		s.workers[i] = s.newWorker(i)
	}
	active := append([]*worker(nil), s.workers...)
	s.watch.active.Store(&active) // before the workers start: they steal from it
	s.workersDone.Add(n)
	for _, w := range s.workers {
		go w.loop()
	}
	s.startWatchdog(opts)
	return s
}

func (s *Scheduler) newWorker(id int) *worker {
	w := &worker{
		id:    id,
		s:     s,
		local: deque.New[*proc](64),
		rng:   rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano()))),
	}
	w.out = &w.outs[0]
	return w
}

// Handle refers to a submitted process. It is a small value; copy it freely.
type Handle struct{ p *proc }

// PID returns the process's PID.
func (h Handle) PID() PID { return h.p.pid }

// Done is closed when the process has ended.
func (h Handle) Done() <-chan struct{} { return h.p.doneChan() }

// Result returns the process's results and error. It is valid once Done is
// closed.
func (h Handle) Result() (payload.Payloads, error) { return h.p.result, h.p.err }

// Wait blocks until the process ends or ctx is done.
func (h Handle) Wait(ctx context.Context) (payload.Payloads, error) {
	select {
	case <-h.p.doneChan():
		return h.p.result, h.p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Submit runs p.Init(method, input) on the calling goroutine and, if it
// succeeds, queues p to run. Init's context carries the new PID (PIDFrom).
func (s *Scheduler) Submit(p Process, method string, input payload.Payloads) (Handle, error) {
	return s.submit(nil, p, method, input)
}

// submit is Submit; w is the calling worker if the caller runs on one.
func (s *Scheduler) submit(w *worker, p Process, method string, input payload.Payloads) (Handle, error) {
	return s.submitRelated(w, p, method, input, nil, nil, false)
}

// submitRelated is submit, calling rel (if not nil) on the new process
// once it is in the table and before it is queued: if rel fails, the
// process never runs and Submit fails with rel's error. opts (nil: none)
// give it a parent context. inline (only from a goroutine that is not
// stepping a process) runs its first steps here, if an inline worker is
// free (inline.go).
func (s *Scheduler) submitRelated(w *worker, p Process, method string, input payload.Payloads, opts *SubmitOptions, rel relate, inline bool) (Handle, error) {
	w = w.homed()
	if s.closing.Load() {
		return Handle{}, ErrClosed
	}
	if !s.limits.takeSlot(s) {
		s.stats.refusedProcesses.Add(1)
		return Handle{}, ErrTooManyProcesses
	}
	count := s.nextPID.Add(1)
	if count > localMask { // the count would run into the node bits (relay.go)
		s.slots.Add(-1)
		s.stats.refusedProcesses.Add(1)
		return Handle{}, ErrTooManyProcesses
	}
	pr := &proc{impl: p, pid: s.nodeBits | PID(count)}
	pr.events.InitWithStub(&pr.stub)
	if opts != nil {
		pr.ctx.values, pr.home = opts.Context, opts.home
	}
	if err := p.Init(pr.context(), method, input); err != nil {
		pr.context().cancel(err)
		s.table.release(pr.pid) // its PID is never used
		s.slots.Add(-1)
		return Handle{}, err
	}
	_, pr.interrupts = p.(Interrupter)
	_, pr.preempts = p.(Preempter)
	if opts != nil && opts.Context != nil {
		s.watchParent(pr, opts.Context, opts.KillReason)
	}
	s.live.Add(1)
	s.table.put(pr)
	// Shutdown stores closing, then lists the table; this put the process
	// in the table, then loads closing. One of the two sees the other: a
	// process Shutdown does not see never runs.
	if s.closing.Load() {
		if pr.state.CompareAndSwap(stateReady, stateRunning) {
			s.discard(pr)
			return Handle{}, ErrClosed
		}
		// abandon took it: it was submitted, and ended abandoned
		s.stats.submitted.Add(1)
		return Handle{pr}, nil
	}
	if rel != nil {
		if err := rel(pr); err != nil {
			if pr.state.CompareAndSwap(stateReady, stateRunning) {
				s.discard(pr)
				return Handle{}, err
			}
			s.stats.submitted.Add(1) // abandon took it meanwhile
			return Handle{pr}, nil
		}
	}
	s.stats.submitted.Add(1)
	switch iw := s.inlineFor(inline, w); {
	case pr.home != nil: // its home runs it (Run, home.go)
	case iw != nil:
		s.runInline(iw, pr)
		s.putInline(iw)
	case w != nil:
		w.local.PushBottom(pr)
		s.wakeIfNeeded() // someone may steal it
	default:
		s.enqueue(pr)
	}
	return Handle{pr}, nil
}

// inlineFor is the inline worker to run a new process on (inline.go), or
// nil: none asked for, the caller steps a process (w), or none free.
func (s *Scheduler) inlineFor(inline bool, w *worker) *worker {
	if !inline || w != nil {
		return nil
	}
	return s.takeInline()
}

// discard ends p, which lost its Submit to Shutdown and never ran; no
// counter but live hears of it (its caller got ErrClosed).
func (s *Scheduler) discard(p *proc) {
	p.state.Store(stateDone)
	closeProcess(p)
	p.result, p.err = nil, ErrClosed
	p.context().cancel(ErrClosed)
	p.endGrace(ErrClosed)
	s.endRelations(p, ErrClosed)
	s.table.remove(p.pid)
	s.noteEnded()
	p.markDone()
}

type pidKey struct{}

// PIDFrom returns the PID of the process whose context ctx is (the one
// passed to Init, or a Call's Ctx), or 0.
func PIDFrom(ctx context.Context) PID {
	if c, ok := ctx.(*procContext); ok { // a process's own: no PID boxed by Value
		return c.pid
	}
	pid, _ := ctx.Value(pidKey{}).(PID)
	return pid
}

// Lookup returns a handle for a live process.
func (s *Scheduler) Lookup(pid PID) (Handle, bool) {
	p := s.table.get(pid)
	if p == nil {
		return Handle{}, false
	}
	return Handle{p}, true
}

// Send queues msg for process to, as a message from process from (0: from
// Go). It never blocks. A process that waits for messages wakes; one that
// waits for a command's completion gets the message with its next step.
// It fails with ErrNoProcess if to does not exist or has ended.
func (s *Scheduler) Send(from, to PID, msg any) error {
	return s.send(nil, from, to, msg)
}

// send is Send; w is the calling worker if the caller runs on one.
func (s *Scheduler) send(w *worker, from, to PID, msg any) error {
	if to&^localMask != s.nodeBits {
		return s.forward(from, to, msg) // relay.go
	}
	p := s.table.get(to)
	if p == nil {
		return fmt.Errorf("send to %d: %w", to, ErrNoProcess)
	}
	counted := s.limits.countsHandOff(p)
	if w != nil && !counted && (w.handOff(p, from, msg, false) || p == w.nest.caller && w.takeReply(p, from, msg)) {
		return nil // before senders: a hand-off holds p (a reply's caller is Running), which cannot end meanwhile
	}
	// Announce the send before checking Done; finish stores Done before
	// reading senders. One of the two sees the other.
	p.senders.Add(1)
	if p.state.Load()&stateMask == stateDone {
		p.senders.Add(-1)
		return fmt.Errorf("send to %d: %w", to, ErrNoProcess)
	}
	if !s.limits.admit(s, p) {
		p.senders.Add(-1)
		s.stats.refusedMessages.Add(1)
		return ErrMailboxFull // as it is: a flood meets it millions of times
	}
	if w != nil && counted && w.handOff(p, from, msg, true) {
		p.senders.Add(-1)
		return nil
	}
	n := w.getNode()
	n.Value = Event{Type: EventMessage, From: from, Data: msg}
	p.events.Push(n)
	s.wake(p, true, w)
	p.senders.Add(-1)
	return nil
}

// Kill asks process pid to end: it gets an EventCancel carrying reason (if
// nil, a generic one) and its context is cancelled at once, which cancels
// the commands it has in flight (and lets a process interrupt a long step).
// It fails with ErrNoProcess if pid does not exist or has ended; a process
// that was already finishing its last step may still end normally.
func (s *Scheduler) Kill(pid PID, reason error) error {
	if s.isRemote(pid) {
		return s.killRemote(pid, reason) // remote.go
	}
	p := s.table.get(pid)
	if p == nil || p.state.Load()&stateMask == stateDone {
		return fmt.Errorf("kill %d: %w", pid, ErrNoProcess)
	}
	if reason == nil {
		reason = errors.New("killed")
	}
	s.cancel(p, reason, false)
	return nil
}

// cancel asks p to end with reason, for Kill (atShutdown false) or
// Shutdown: an EventCancel, and its context cancelled at once, so that a
// long step stops now (a Lua loop at its next instruction) and the
// commands in flight are cancelled. The first cancel of a process decides
// how its end is counted (finish).
//
// Only the first cancel sends the event and cancels the context: the
// reason the process ends with is then the one it is counted by. A Kill
// after Shutdown's cancel still ends the process's cleanup commands, and
// a process that trapped the shutdown.
func (s *Scheduler) cancel(p *proc, reason error, atShutdown bool) {
	firstKill := false
	if !atShutdown {
		firstKill = p.setFlag(pflagKilled)
		p.endGrace(reason)
	}
	trapped := false // decided before the cancel is installed: a Kill racing it reads it
	if st, ok := p.impl.(ShutdownTrapper); ok && atShutdown {
		trapped = st.TrapsShutdown()
	}
	if !p.cancelled.CompareAndSwap(nil, &cancelInfo{reason: reason, atShutdown: atShutdown, trapped: trapped}) {
		// A shutdown the process trapped does not cover a Kill or the
		// watchdog's MaxStep: the kill takes over (the process ends now,
		// counted as killed).
		if c := p.cancelled.Load(); firstKill && c.trapped &&
			p.cancelled.CompareAndSwap(c, &cancelInfo{reason: reason}) {
			s.sendCancel(p, reason)
			p.context().cancel(reason)
		}
		return
	}
	// The event first: whatever the context's cancellation triggers (a
	// handler failing its call) then reaches the process after it.
	s.sendCancel(p, reason)
	if trapped {
		return // it may run on until the deadline (abandon cancels it then)
	}
	p.context().cancel(reason)
}

// ShutdownTrapper is implemented by processes that may take Shutdown's
// cancel as news rather than as an order: while TrapsShutdown says so,
// Shutdown sends them the EventCancel but leaves their context (and their
// commands) running, and they may run on until Shutdown's deadline.
// TrapsShutdown is called from Shutdown's goroutine, concurrently with
// Step.
type ShutdownTrapper interface {
	TrapsShutdown() bool
}

// commandContext is the context of a command p yields: p's own, or, once
// Shutdown has cancelled p, p's grace context (cleanup goes on until the
// deadline, or until p ends or is killed; the commands p had in flight
// were cancelled with p's context). Only the worker running p calls it.
func (s *Scheduler) commandContext(p *proc) context.Context {
	c := p.cancelled.Load()
	if c == nil || !c.atShutdown || p.flag(pflagKilled) {
		return p.context()
	}
	if g := p.grace.Load(); g != nil {
		return g.ctx
	}
	ctx, cancel := context.WithCancelCause(s.grace)
	g := &graceContext{ctx: context.WithValue(ctx, pidKey{}, p.pid), cancel: cancel}
	if p.ctx.values != nil {
		g.ctx = withValuesOf{g.ctx, p.ctx.values}
	}
	p.grace.Store(g)
	if p.flag(pflagKilled) { // Kill looked before the Store: end it here
		cancel(context.Cause(p.context()))
	}
	return g.ctx
}

// endGrace cancels p's grace context, if it has one.
func (p *proc) endGrace(cause error) {
	if g := p.grace.Load(); g != nil {
		g.cancel(cause)
	}
}

// sendCancel queues an EventCancel for p and wakes it.
func (s *Scheduler) sendCancel(p *proc, reason error) {
	n := getNode()
	n.Value = Event{Type: EventCancel, Error: reason}
	p.events.Push(n)
	s.wake(p, false, nil)
}

// enqueue puts a process that was just made Ready into the global queue and
// makes sure a worker will look.
func (s *Scheduler) enqueue(p *proc) {
	if p.sendHome() {
		return
	}
	s.global.push(p)
	s.wakeIfNeeded()
}

// finish ends p, which the caller owns (Running, or taken by Shutdown).
func (s *Scheduler) finish(p *proc, result payload.Payloads, err error) {
	p.state.Store(stateDone)
	s.voidOutstanding(p)
	// Messages still queued die with the process; count them, once every
	// Send that saw the process alive has pushed. So do the messages the
	// process held unread (its last Backlog).
	for p.senders.Load() != 0 {
		runtime.Gosched()
	}
	dropped := int(p.backlog)
	if p.handed {
		p.handedMsg, p.handed, p.handedCounted = nil, false, false
		dropped++
	}
	for {
		ev, n, ok := p.events.Pop()
		if !ok {
			if !p.events.Pending() {
				break
			}
			// A completion or cancel still linking hides what is behind it.
			runtime.Gosched()
			continue
		}
		if n != &p.stub {
			nodePool.Put(n)
		}
		if ev.Type == EventMessage {
			dropped++
		}
	}
	s.stats.droppedMessages.Add(uint64(dropped))
	if cerr := closeProcess(p); cerr != nil && err == nil {
		err = cerr
	}
	p.result, p.err = result, err
	if e, ok := p.impl.(Ender); ok {
		e.Ended(result, err)
	}
	s.countEnd(p, err)
	if s.onCrash != nil && err != nil && !p.watched() && p.cancelled.Load() == nil && !errors.Is(err, ErrAbandoned) {
		s.onCrash(p.pid, err) // before endRelations clears what watched() looks at
	}
	s.endRelations(p, err)
	cause := ErrProcessEnded
	if err != nil {
		cause = err
	}
	p.context().cancel(cause) // commands still in flight are cancelled
	p.endGrace(cause)
	s.table.remove(p.pid)
	s.noteEnded() // before done: a waiter sees the process gone from Stats
	p.markDone()
}

// countEnd counts how p ended: without an error, by the cancel that
// reached it first (Kill or Shutdown: its error is that cancel's reason),
// abandoned, or with an error of its own.
func (s *Scheduler) countEnd(p *proc, err error) {
	c := p.cancelled.Load()
	switch {
	case err == nil:
		s.stats.completed.Add(1)
	case errors.Is(err, ErrAbandoned):
		s.stats.abandoned.Add(1)
	case c != nil && errors.Is(err, c.reason) && c.atShutdown:
		s.stats.cancelled.Add(1)
	case c != nil && errors.Is(err, c.reason):
		s.stats.killed.Add(1)
	default:
		s.stats.failed.Add(1)
	}
}

// voidOutstanding makes every unanswered yield of p unanswerable. A yield
// whose completer already won (its event is in flight or queued) is counted
// as dropped here; later completers count themselves.
func (s *Scheduler) voidOutstanding(p *proc) {
	for i, r := range p.outstanding {
		if !r.token.CompareAndSwap(r.gen, 0) {
			s.stats.droppedCompletions.Add(1)
		}
		p.outstanding[i] = nil
	}
	p.outstanding = nil
}

func closeProcess(p *proc) (err error) {
	if p.stopParent != nil {
		p.stopParent()
	}
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Where: fmt.Sprintf("process %d Close", p.pid), Value: v}
		}
	}()
	p.impl.Close()
	return nil
}

func (s *Scheduler) noteEnded() {
	s.slots.Add(-1)
	if s.live.Add(-1) == 0 && s.closing.Load() {
		s.doneOnce.Do(func() { close(s.allDone) })
	}
}

// ShutdownError lists the processes Shutdown had to abandon.
type ShutdownError struct {
	Abandoned []PID
}

func (e *ShutdownError) Error() string {
	return fmt.Sprintf("shutdown deadline passed: abandoned %d processes %v", len(e.Abandoned), e.Abandoned)
}

// Shutdown stops taking processes and cancels every live one (reason
// ErrShutdown): it gets an EventCancel, and its context is cancelled at
// once, which stops a long step and cancels its commands in flight. It
// keeps running them — the commands they yield while cleaning up get a
// context that lasts until ctx is done — until all have ended or ctx is
// done. Then it ends the rest with ErrAbandoned (closing them, and listing
// them in a *ShutdownError), stops the workers and the watchdog, and
// waits for them to exit. A running step is ended when it returns: a Step
// that never returns (and ignores its context) blocks Shutdown. Do not
// call Shutdown from a Step, an Init or a handler (it waits for them).
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	for _, p := range s.table.all() {
		s.cancel(p, ErrShutdown, true)
	}
	if s.live.Load() == 0 {
		s.doneOnce.Do(func() { close(s.allDone) })
	}
	var err error
	select {
	case <-s.allDone:
	case <-ctx.Done():
		select {
		case <-s.allDone: // both were ready: nothing to abandon
		default:
			err = s.abandon()
		}
	}
	s.cancelGrace()
	s.stopWatchdog() // before the workers: it may start helpers, which they wait for
	s.stopWorkers()
	s.workersDone.Wait()
	return err
}

// abandon ends every process still alive. Parked and queued ones are taken
// here; a running one is ended by its worker when its step returns.
func (s *Scheduler) abandon() error {
	s.abandoning.Store(true)
	s.cancelGrace() // the cleanup commands
	for _, p := range s.table.all() {
		p.context().cancel(ErrAbandoned) // those that trapped the shutdown: a long step stops
	}
	for s.live.Load() > 0 {
		s.abandonHanded()
		for _, p := range s.table.all() {
			st := p.state.Load()
			switch st & stateMask {
			case stateReady, stateBlocked, stateIdle:
				if p.state.CompareAndSwap(st, stateRunning) {
					s.endAbandoned(p)
				}
			}
		}
		select {
		case <-s.allDone:
		case <-time.After(time.Millisecond):
		}
	}
	s.abandonedMu.Lock()
	defer s.abandonedMu.Unlock()
	if len(s.abandoned) == 0 {
		return nil
	}
	gone := slices.Clone(s.abandoned)
	slices.Sort(gone)
	return &ShutdownError{Abandoned: gone}
}

// abandonHanded ends the processes waiting in the workers' handed slots
// (handoff.go): held Running for a worker that is still in the step that
// handed them a message, they are not running, and the one taking one
// from its slot owns it, as abandon owns a Ready process it takes. Left
// there, one would wait for that step to end, or for the watchdog to
// make it Ready (a tick: with a long Slice, as long as the step runs).
// Only running workers and helpers (watch.active) hand off into slots;
// a helper empties its own before it retires.
func (s *Scheduler) abandonHanded() {
	for _, w := range *s.watch.active.Load() {
		if p := w.takeHanded(); p != nil {
			s.endAbandoned(p)
		}
	}
}

// endAbandoned ends p, which the caller owns, and lists it as abandoned.
func (s *Scheduler) endAbandoned(p *proc) {
	s.abandonedMu.Lock()
	s.abandoned = append(s.abandoned, p.pid)
	s.abandonedMu.Unlock()
	s.finish(p, nil, ErrAbandoned)
}
