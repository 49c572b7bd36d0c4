package luaproc

// Timeouts of receive and call: one timer per process, armed lazily.
//
// A task blocked in process.receive(timeout) or process.call has a
// deadline. Arming a runtime timer per wait (a time.sleep command) costs
// more than the wait itself when the answer comes in microseconds, which
// is the common case for a call, and leaves a timer in the Go runtime's
// heap for the whole timeout (5 s for a call by default) after the wait
// has ended: 170,000 calls a second kept 850,000 dead timers live.
//
// So a process keeps its deadlines in a list and arms a timer only when
// no timer it has in flight fires by the new deadline. A wait that ends
// early just leaves the list; its timer stays armed, and when it fires
// the process times out what is due, if anything, and arms the next
// timer if the earliest remaining deadline has none. A steady stream of
// calls thus arms about one timer per timeout period, not one per call.
//
// The timers are the process's own command (deadlineCommand, not
// time.sleep), which hands the process a stopper (timerStop): when the
// process ends, its armed timers are stopped (stopTimers, from Close). A
// short-lived process that makes a call (an http.serve request asking a
// store process) would otherwise leave its 5 s timer in the Go runtime's
// heap, to fire for nothing: at 20,000 requests a second, 100,000 dead
// timers live and 20,000 fire a second, each on a goroutine of its own.
//
// Invariants (the process's goroutine only, like everything here):
//   - every entry of pending belongs to a task blocked in a receive or a
//     call, with t.deadline its at; ending the wait removes it;
//   - some entry of armed fires at or before the earliest pending at, so
//     every deadline is met: a timer fires no earlier than its at, and
//     when it fires the due entries are timed out and the invariant is
//     restored for the rest.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
)

// deadlineCommand arms a process's timeout timer: Args are the seconds
// (float64) and the *timerStop by which the process stops it.
const deadlineCommand = "luarun.deadline"

// deadline is a task's timeout.
type deadline struct {
	t  *task
	at monoTime
}

// monoTime is a time on the runtime's monotonic clock: nanoseconds since
// it started. A call reads it (setDeadline): time.Since costs one clock
// read where time.Now costs two (wall and monotonic, ~48 ns here against
// ~25), and its sums and comparisons are an int64's.
type monoTime int64

// mono is the time now on rt's monotonic clock.
func (rt *Runtime) mono() monoTime { return monoTime(time.Since(rt.started)) }

// after is the time d seconds after m (the latest time there is, if that
// is past it).
func (m monoTime) after(seconds float64) monoTime {
	at := m + monoTime(seconds*float64(time.Second))
	if at < m {
		return math.MaxInt64
	}
	return at
}

// secondsTo is the time from m to at, in seconds.
func (m monoTime) secondsTo(at monoTime) float64 {
	return float64(at-m) / float64(time.Second)
}

// armedTimer is a deadlineCommand in flight, completing with tag at (or
// after) at unless stopped.
type armedTimer struct {
	tag  uint64
	at   monoTime
	stop *timerStop
}

// timerStop stops an armed timer from the process's side. The command's
// handler stores the timer, then looks at stopped; stop sets stopped,
// then looks for the timer: whichever comes second stops it.
type timerStop struct {
	timer   atomic.Pointer[time.Timer]
	stopped atomic.Bool
}

// stop stops the timer, now or as soon as the handler has made it.
func (s *timerStop) stop() {
	s.stopped.Store(true)
	if t := s.timer.Load(); t != nil {
		t.Stop()
	}
}

// armDeadline is deadlineCommand's handler: a runtime timer (no
// goroutine until it fires) that completes the call after Args[0]
// seconds, unless Args[1] stops it first.
func armDeadline(c scheduler.Call) error {
	seconds, ok1 := c.Args[0].(float64)
	st, ok2 := c.Args[1].(*timerStop)
	if len(c.Args) != 2 || !ok1 || !ok2 {
		return fmt.Errorf("%s: (seconds, *timerStop) expected, got %v", deadlineCommand, c.Args)
	}
	t := time.AfterFunc(time.Duration(seconds*float64(time.Second)), func() { c.Complete(nil) })
	st.timer.Store(t)
	if st.stopped.Load() {
		t.Stop()
	}
	return nil
}

// stopTimers stops the timers p armed (the process has ended: nothing
// waits for them).
func (p *luaProcess) stopTimers() {
	if p.dl == nil {
		return
	}
	for i, a := range p.dl.armed {
		a.stop.stop()
		p.dl.armed[i] = armedTimer{}
	}
	p.dl.armed = p.dl.armed[:0]
}

// deadlines are a process's timeouts and the timers armed for them, made
// by its first timeout (setDeadline): most processes wait without one.
type deadlines struct {
	pending []deadline
	armed   []armedTimer
	// firstStop is the first timer's stopper, in the deadlines' own
	// allocation (a process that makes one call arms one timer).
	firstStop timerStop
	usedFirst bool
}

// setDeadline gives t, blocked in a receive or a call, a timeout of
// seconds from now.
func (p *luaProcess) setDeadline(t *task, seconds float64) {
	if seconds >= maxTimeoutSeconds {
		return // no timer can fire that late: forever
	}
	now := p.rt.mono()
	at := now.after(seconds)
	t.hasDeadline = true
	if p.dl == nil {
		p.dl = &deadlines{}
	}
	p.dl.pending = append(p.dl.pending, deadline{t: t, at: at})
	p.armFor(at, now)
}

// maxTimeoutSeconds: a timeout this long or longer never ends the wait.
const maxTimeoutSeconds = float64(1<<63-1) / float64(time.Second)

// armFor arms a timer for at unless one in flight fires by then.
func (p *luaProcess) armFor(at, now monoTime) {
	for _, a := range p.dl.armed {
		if a.at <= at {
			return
		}
	}
	tag, st := p.newTag(), &p.dl.firstStop
	if p.dl.usedFirst {
		st = &timerStop{}
	}
	p.dl.usedFirst = true
	p.dl.armed = append(p.dl.armed, armedTimer{tag: tag, at: at, stop: st})
	p.out.Yield(tag, deadlineCommand, now.secondsTo(at), st)
}

// clearDeadline removes t's deadline: its wait ended first.
func (p *luaProcess) clearDeadline(t *task) {
	if !t.hasDeadline {
		return
	}
	t.hasDeadline = false
	for i, d := range p.dl.pending {
		if d.t == t {
			last := len(p.dl.pending) - 1
			p.dl.pending[i] = p.dl.pending[last]
			p.dl.pending[last] = deadline{}
			p.dl.pending = p.dl.pending[:last]
			return
		}
	}
}

// timerFired handles the completion tag if it is one of the armed
// timers: it times out the waits that are due and arms the next timer.
func (p *luaProcess) timerFired(tag uint64) bool {
	if p.dl == nil {
		return false // no timer was armed
	}
	i := 0
	for i < len(p.dl.armed) && p.dl.armed[i].tag != tag {
		i++
	}
	if i == len(p.dl.armed) {
		return false
	}
	p.dl.armed = append(p.dl.armed[:i], p.dl.armed[i+1:]...)
	now := p.rt.mono()
	next, hasNext := monoTime(0), false
	var due []deadline
	for j := 0; j < len(p.dl.pending); {
		d := p.dl.pending[j]
		if d.at > now {
			if !hasNext || d.at < next {
				next, hasNext = d.at, true
			}
			j++
			continue
		}
		due = append(due, d)
		p.clearDeadline(d.t) // moves another entry to j
	}
	// A timer that fired late may cover several deadlines: the waits
	// resume in the order of their deadlines, as they would have ended.
	slices.SortStableFunc(due, func(a, b deadline) int { return cmp.Compare(a.at, b.at) })
	for _, d := range due {
		p.timedOut(d.t)
	}
	if hasNext {
		p.armFor(next, now)
	}
	return true
}

// timedOut ends t's receive or call with nil, "timeout".
func (p *luaProcess) timedOut(t *task) {
	if t.call != nil {
		p.endCall(t, []lua.LValue{lua.LNil, timeoutValue})
		return
	}
	p.removeReceiver(t)
	t.match = nil
	t.args = []lua.LValue{lua.LNil, timeoutValue}
	p.ready = append(p.ready, t)
}
