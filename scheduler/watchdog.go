package scheduler

// The watchdog: the scheduler's sysmon.
//
// A process's step runs on its worker until it returns, and nothing can
// preempt it (a Lua process only yields at a blocking call). A step that
// runs long — a CPU loop — holds its worker, and the processes queued on
// that worker's deque, or anywhere while every worker is busy, would wait
// for it. The Go runtime's sysmon has the same problem with a P whose M is
// stuck in a system call, and solves it by handing the P's work to
// another M. Here:
//
//   - Each worker publishes its step sequence (stepSeq): a new odd value
//     when a step starts, an even one when the worker goes idle, with the
//     PID of the process it runs in the same word (stepWord). One atomic
//     store per process run, on the worker's own cache line; nothing
//     else on the hot path.
//   - The watchdog goroutine wakes every tick (Slice/2) and compares each
//     worker's sequence with what it saw last time. The same odd value
//     means the same step is still running; the time since the watchdog
//     first saw it is how long (at most one tick less than the truth).
//   - A worker whose step has run past Slice is stuck. As sysmon hands a
//     stuck P's run queue to another M, the watchdog moves the processes
//     queued on the stuck worker's deque to the global queue (stealing
//     them, which any goroutine may), where every worker looks at least
//     every 61st time it looks for work, however busy. It wakes a
//     sleeping worker if there is one; if every running worker is stuck,
//     it starts a helper: a temporary worker with a deque of its own that
//     runs whatever it finds and retires as soon as it finds nothing (the
//     next tick starts another if one is still needed). At most
//     maxHelpers run: if they all get stuck too, the rest waits (that is
//     what MaxStep is for).
//   - A step that has run past SlowStep is reported once per process: to
//     the process if it is a SlowStepper (a Lua process logs the line its
//     loop is at), else through Options.Warn — if it kept other processes
//     waiting (a tick that found it stuck found work queued: contended),
//     or always when MaxStep is set. A lone batch computation, or one
//     beside idle workers, delays nobody and is not reported.
//   - A step that has run past MaxStep gets its process killed with a
//     *StepLimitError: its context is cancelled, which a Lua loop notices
//     at its next instruction. The time MaxStep counts is the step's
//     share of the CPU time the program was given, not wall time (a step
//     starved by load is not a runaway): each tick credits each step
//     still running with min(the tick's wall time, the process's CPU time
//     over the tick (getrusage) / the steps running), which is what Go's
//     fair time-slicing gives each when more steps run than processors,
//     and less when the OS gives the program less. Where the process's
//     CPU time cannot be read (not unix), the wall time is credited.
//     Slice and SlowStep stay in wall time: they are about how long the
//     others wait.
//
// So a process queued behind a busy one waits about Slice plus a tick
// (10-15 ms by default) before a helper or a free worker runs it the
// first time; while the worker stays stuck, a helper stays at hand
// (parked, and kicked by the next producer: see helperLoop), and later
// work runs at once. A step limit takes effect within a tick of the
// limit. The watchdog ticks
// every Slice/2 while any process lives (a few microseconds of work
// each), as sysmon does, and every idleTick when none does; Slice < 0
// turns it off.

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luarun/luarun/deque"
)

// SlowStepper is implemented by processes that report their own slow
// steps (see Options.SlowStep). The watchdog calls SlowStep, from its own
// goroutine and while the step is still running, at most once per
// process; it must not block.
type SlowStepper interface {
	SlowStep(elapsed time.Duration)
}

// StepLimitError ends a process whose step ran longer than
// Options.MaxStep.
type StepLimitError struct {
	PID   PID
	Limit time.Duration
}

func (e *StepLimitError) Error() string {
	return fmt.Sprintf("pid %d ran %v without blocking", e.PID, e.Limit)
}

// maxHelpers bounds the helpers running at once.
const maxHelpers = 256

// idleTick is the watchdog's period while no process lives.
const idleTick = 100 * time.Millisecond

type watchdog struct {
	slice, maxStep, slowStep time.Duration
	stop                     chan struct{}
	done                     chan struct{}
	stopOnce                 sync.Once
	// spare is the watchdog goroutine's own deque, to steal a stuck
	// worker's processes into on their way to the global queue.
	spare *deque.Deque[*proc]

	// active: the running workers and helpers, the victims steal looks
	// at. Replaced (copy on write, under mu) when a helper starts or
	// retires; read by any worker.
	active atomic.Pointer[[]*worker]
	mu     sync.Mutex
	// helpers: every helper ever made (at most maxHelpers), idle ones
	// reused; their counters stay in Stats. Under mu.
	helpers []*worker

	// lastTick, lastCPU: the watchdog's last tick, and the process's CPU
	// time then (cpuShare).
	lastTick time.Time
	lastCPU  time.Duration

	// stuck: the workers the last tick found stuck (written by the
	// watchdog, read by helpers). parked: idle helpers waiting for a kick
	// (written by helpers, read by producers in wakeIfNeeded). kick: a
	// token for one of them.
	stuck  atomic.Int32
	parked atomic.Int32
	kick   chan struct{}
}

// stepWatch is a worker's state as the watchdog sees it. stepSeq is
// written by the worker (Store) and read by the watchdog; seq is the
// worker's own; the rest belong to the watchdog goroutine.
type stepWatch struct {
	stepSeq atomic.Uint64 // stepWord(pid, seq)
	seq     uint64        // the worker's step sequence (stepSeqBits wide)

	seenSeq   uint64        // watchdog: the sequence seen last tick
	seenSince time.Time     // watchdog: when it first saw it
	ranCPU    time.Duration // watchdog: its share of the CPU since then (MaxStep's clock)
	limited   bool          // watchdog: MaxStep already killed this step
	contended bool          // watchdog: work was queued while this step was stuck
	helping   bool          // a helper, running (under watchdog.mu)
}

// stepSeqBits is how many low bits of stepSeq hold the sequence; the
// local part of the stepping process's PID (39 bits: relay.go) fills the
// rest, so that one store publishes both (a second, of a pointer, is a
// second LOCK XCHG a step). The sequence wraps at 2^25 steps, which no
// worker makes in the tick between two looks.
const stepSeqBits = 64 - nodeShift

// stepWord is the stepSeq of a worker at step sequence seq, running (seq
// odd) or last running the process with PID pid.
func stepWord(pid PID, seq uint64) uint64 {
	return uint64(pid&localMask)<<stepSeqBits | seq&(1<<stepSeqBits-1)
}

// beginStep publishes that w starts a step of p.
func (w *worker) beginStep(p *proc) {
	if w.watch.seq&1 == 1 {
		w.watch.seq += 2
	} else {
		w.watch.seq++
	}
	w.watch.stepSeq.Store(stepWord(p.pid, w.watch.seq))
}

// goingIdle publishes that w runs no step, and its counts.
func (w *worker) goingIdle() {
	if w.watch.seq&1 == 1 {
		w.watch.seq++
		w.watch.stepSeq.Store(stepWord(0, w.watch.seq))
		w.publishCounts()
	}
}

func (s *Scheduler) startWatchdog(opts Options) {
	wd := &s.watch
	if opts.Slice < 0 {
		return
	}
	wd.slice, wd.maxStep, wd.slowStep = opts.Slice, opts.MaxStep, opts.SlowStep
	if wd.slice == 0 {
		wd.slice = DefaultSlice
	}
	if wd.slowStep == 0 {
		wd.slowStep = DefaultSlowStep
	}
	wd.lastTick = time.Now()
	wd.lastCPU, _ = processCPU()
	wd.spare = deque.New[*proc](64)
	wd.kick = make(chan struct{}, 1)
	wd.stop, wd.done = make(chan struct{}), make(chan struct{})
	go s.watchLoop()
}

// stopWatchdog stops the watchdog and waits for it (once; Shutdown may be
// called again).
func (s *Scheduler) stopWatchdog() {
	if s.watch.stop != nil {
		s.watch.stopOnce.Do(func() { close(s.watch.stop) })
		<-s.watch.done
	}
}

func (s *Scheduler) watchLoop() {
	wd := &s.watch
	defer close(wd.done)
	period := max(wd.slice/2, time.Millisecond)
	timer := time.NewTimer(period)
	defer timer.Stop()
	for {
		select {
		case <-wd.stop:
			return
		case now := <-timer.C:
			s.watchTick(now)
		}
		if s.live.Load() == 0 {
			timer.Reset(idleTick)
		} else {
			timer.Reset(period)
		}
	}
}

// watchTick looks at every running worker once, and at the inline
// workers' steps (inline.go: limited and reported, never stuck).
func (s *Scheduler) watchTick(now time.Time) {
	wd := &s.watch
	active, inline := *wd.active.Load(), s.inlineWorkers()
	share := wd.cpuShare(now, runningSteps(active)+runningSteps(inline))
	stuck := 0
	waiting := -1 // workWaiting(active), once looked at: 0 or 1
	for _, w := range active {
		p, ran := s.observe(w, now, share)
		if p == nil {
			continue
		}
		if ran >= wd.slice {
			if waiting < 0 {
				waiting = boolInt(s.workWaiting(active))
			}
			w.watch.contended = w.watch.contended || waiting == 1
		}
		s.runnextOverdue(w)
		if ran >= wd.slice {
			stuck++
			s.handOff(w)
		}
		s.limitStep(w, p, ran)
		s.stepParentDone(p)
	}
	for _, w := range inline {
		if p, ran := s.observe(w, now, share); p != nil {
			s.runnextOverdue(w) // inline.go: a follow-up waits behind a long step
			s.limitStep(w, p, ran)
			s.stepParentDone(p)
		}
	}
	wd.stuck.Store(int32(stuck))
	if stuck > 0 {
		s.help(stuck)
	}
}

// observe returns the process whose step w has been running since the
// last tick or before, and for how long (wall time); nil if w runs no
// step or a new one. A step still running is credited share of CPU
// time (cpuShare).
func (s *Scheduler) observe(w *worker, now time.Time, share time.Duration) (*proc, time.Duration) {
	st := &w.watch
	seq := st.stepSeq.Load()
	if seq != st.seenSeq || seq&1 == 0 {
		st.seenSeq, st.seenSince, st.limited, st.ranCPU, st.contended = seq, now, false, 0, false
		return nil, 0
	}
	p := s.table.get(s.nodeBits | PID(seq>>stepSeqBits))
	if st.stepSeq.Load() != seq || p == nil {
		return nil, 0 // the step ended while we looked
	}
	st.ranCPU += share
	return p, now.Sub(st.seenSince)
}

// runningSteps counts the workers of ws that run a step now.
func runningSteps(ws []*worker) int {
	n := 0
	for _, w := range ws {
		if w.watch.stepSeq.Load()&1 == 1 {
			n++
		}
	}
	return n
}

// cpuShare is the CPU time each of running steps had since the last
// tick: the process's CPU time over the tick split among them, at most
// the tick's wall time (the wall time where the CPU time is unknown).
func (wd *watchdog) cpuShare(now time.Time, running int) time.Duration {
	wall := now.Sub(wd.lastTick)
	cpu, ok := processCPU()
	last := wd.lastCPU
	wd.lastTick, wd.lastCPU = now, cpu
	if !ok {
		return wall
	}
	return min(wall, (cpu-last)/time.Duration(max(running, 1)))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// limitStep reports p's step (run by w for ran, wall time) past
// SlowStep if it kept others waiting or MaxStep is set, and kills p when
// its share of the CPU passes MaxStep.
func (s *Scheduler) limitStep(w *worker, p *proc, ran time.Duration) {
	wd, st := &s.watch, &w.watch
	report := st.contended || wd.maxStep > 0
	if report && wd.slowStep > 0 && ran >= wd.slowStep && p.setFlag(pflagSlowReported) {
		s.stats.slowSteps.Add(1)
		s.reportSlow(p, ran)
	}
	if wd.maxStep > 0 && st.ranCPU >= wd.maxStep && !st.limited {
		st.limited = true
		if p.state.Load()&stateMask != stateDone {
			s.stats.stepLimited.Add(1)
			s.cancel(p, &StepLimitError{PID: p.pid, Limit: wd.maxStep}, false)
		}
	}
}

// kickHelper wakes a parked helper, if one parks.
func (s *Scheduler) kickHelper() {
	select {
	case s.watch.kick <- struct{}{}:
	default: // a kick is pending already
	}
}

func (s *Scheduler) reportSlow(p *proc, ran time.Duration) {
	if ss, ok := p.impl.(SlowStepper); ok {
		ss.SlowStep(ran)
	} else if s.limits.warn != nil {
		s.limits.warn(p.pid, fmt.Sprintf("process %d has run for %v without blocking", p.pid, ran.Round(time.Millisecond)))
	}
}

// runnextOverdue moves the process waiting in w's runnext to the global
// queue, and wakes a worker for it: w's step has run for a tick or more,
// so the process that woke it did not block soon after (a process woken
// by one that computes on waits one or two ticks, 5-10 ms by default).
func (s *Scheduler) runnextOverdue(w *worker) {
	if p := w.takeHanded(); p != nil { // held Running for w (handoff.go)
		s.global.push(makeReady(p))
		s.wakeIfNeeded()
	}
	if p := w.takeRunnext(); p != nil {
		s.global.push(p)
		s.wakeIfNeeded()
	}
}

// handOff moves the processes queued on stuck worker w's deque to the
// global queue. A steal that finds a thief mid-copy takes nothing; the
// next tick tries again.
func (s *Scheduler) handOff(w *worker) {
	spare := s.watch.spare
	for w.local.Len() > 0 && w.local.StealHalfInto(spare) > 0 {
		for {
			p, ok := spare.PopBottom()
			if !ok {
				break
			}
			s.global.push(p)
		}
	}
}

// help makes sure the work queued behind stuck workers runs: a sleeping
// worker is woken to take it, or, if every running worker is stuck, a
// helper is started. (Busy workers look at the global queue anyway.)
func (s *Scheduler) help(stuck int) {
	wd := &s.watch
	active := *wd.active.Load()
	if !s.workWaiting(active) {
		return
	}
	if stuck < len(active) {
		s.wakeIfNeeded()
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if s.closing.Load() && s.abandoning.Load() {
		return
	}
	for _, h := range wd.helpers {
		if !h.watch.helping {
			s.startHelper(h)
			return
		}
	}
	if len(wd.helpers) < maxHelpers {
		h := s.newWorker(len(s.workers) + len(wd.helpers))
		wd.helpers = append(wd.helpers, h)
		s.startHelper(h)
	}
}

// workWaiting reports whether a process is queued anywhere.
func (s *Scheduler) workWaiting(active []*worker) bool {
	if s.global.n.Load() > 0 {
		return true
	}
	for _, w := range active {
		if w.local.Len() > 0 || w.runnext.Load() != nil || w.handed.Load() != nil {
			return true
		}
	}
	return false
}

// startHelper runs h as a helper (under watchdog.mu).
func (s *Scheduler) startHelper(h *worker) {
	h.watch.helping = true
	s.setActive(h, true)
	s.stats.helpers.Add(1)
	s.workersDone.Add(1)
	go h.helperLoop()
}

// setActive adds h to the steal victims, or removes it (under mu).
func (s *Scheduler) setActive(h *worker, on bool) {
	old := *s.watch.active.Load()
	next := make([]*worker, 0, len(old)+1)
	for _, w := range old {
		if w != h {
			next = append(next, w)
		}
	}
	if on {
		next = append(next, h)
	}
	s.watch.active.Store(&next)
}

// helperLoop runs processes until it finds none, then retires. Its deque
// is empty then (findWork looks there first), and only it pushes there.
//
// While the watchdog last saw a stuck worker, an idle helper does not
// retire at once: it parks (parked), and a producer that finds no worker
// to wake kicks it (wakeIfNeeded), so that work arriving behind the
// stuck one — a timer, a reply — runs now rather than at the next tick.
func (w *worker) helperLoop() {
	s := w.s
	wd := &s.watch
	defer s.workersDone.Done()
	for {
		p := w.findWork()
		if p == nil {
			p = w.spin()
		}
		if p == nil && wd.stuck.Load() > 0 && !s.closing.Load() {
			w.goingIdle()
			wd.parked.Add(1)
			select {
			case <-wd.kick:
			case <-time.After(wd.slice):
			}
			wd.parked.Add(-1)
			continue
		}
		if p == nil {
			break
		}
		if w.claim(p) {
			w.runCaught(p)
		}
	}
	w.goingIdle()
	s.watch.mu.Lock()
	w.watch.helping = false
	s.setActive(w, false)
	s.watch.mu.Unlock()
	// A process pushed to the global queue between the last look and the
	// retirement is found by a worker it wakes, or the next tick.
}

// allWorkers returns the workers and every helper ever made (for Stats).
func (s *Scheduler) allWorkers() []*worker {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	all := append(append([]*worker(nil), s.workers...), s.watch.helpers...)
	return append(all, s.inlineWorkers()...)
}

// stepParentDone kills p, whose step has run since the last tick, if it
// is homed and its parent context is done (watchParent): its home, which
// runs the step, cannot look.
func (s *Scheduler) stepParentDone(p *proc) {
	if p.parentHomed {
		s.parentDone(p)
	}
}
