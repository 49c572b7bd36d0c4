package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/luarun/luarun/mpsc"
	"github.com/luarun/luarun/payload"
)

// A Dispatcher receives every yield the processes make. Dispatch must
// return at once; the command's result is delivered through the Call's
// Complete or Fail, now (on this goroutine) or later (on any goroutine).
type Dispatcher interface {
	Dispatch(c Call)
}

// Call is one yield on its way to a handler. It is a small value: keep it
// to complete later.
type Call struct {
	Completer
	PID     PID
	Command string
	Args    payload.Payloads
	// Ctx is the process's context: done when the process is killed or the
	// scheduler gives up on it. Long-running handlers should watch it.
	Ctx context.Context
}

// Completer answers one yield of one process. The first Complete or Fail
// delivers; any later one, and any one after the process ended, is dropped
// (and counted in Stats.DroppedCompletions). It never reaches another
// process or another yield, whatever memory has been reused since.
type Completer struct {
	rec *yieldRec
	gen uint64
}

// Complete delivers data as the yield's result. It reports whether the
// completion was delivered.
func (c Completer) Complete(data any) bool {
	return c.deliver(Event{Type: EventYieldComplete, Data: data})
}

// Fail delivers err as the yield's failure. It reports whether the
// completion was delivered.
func (c Completer) Fail(err error) bool {
	return c.deliver(Event{Type: EventYieldComplete, Error: err})
}

func (c Completer) deliver(ev Event) bool {
	r := c.rec
	if r == nil {
		return false
	}
	if !r.token.CompareAndSwap(c.gen, 0) {
		r.s.stats.droppedCompletions.Add(1)
		return false
	}
	// The CAS made this goroutine the only one that may read r's fields
	// until the worker consumes the event (and only then recycles r).
	if r.answer.Load() == answerAwaited { // dispatched by StepOutput.Command: maybe answered in its handler
		ev.Tag = r.tag
		r.answered = ev
		if r.answer.CompareAndSwap(answerAwaited, answerGiven) {
			return true // Command returns it: no event, no wake
		}
		r.answered = Event{} // Command gave up waiting first: an event, as for any yield
	}
	p, n := r.p, r.node
	ev.Tag, ev.rec = r.tag, r
	n.Value = ev
	p.events.Push(n)
	r.s.wake(p, false, nil) // any goroutine: the global queue
	return true
}

// nodePool supplies queue nodes to senders that are not workers (Send,
// Kill); workers recycle their own and return the surplus here.
var nodePool = sync.Pool{New: func() any { return new(mpsc.Node[Event]) }}

func getNode() *mpsc.Node[Event] { return nodePool.Get().(*mpsc.Node[Event]) }

// yieldRec binds one dispatched yield to its process. Records are recycled
// by the worker that consumes their completion; gen makes every use of a
// record distinct, so a stale Completer can never match a later use.
type yieldRec struct {
	// token is gen while the yield is outstanding, 0 once answered or
	// voided. Armed (Store) by the worker that dispatches; cleared (CAS
	// gen→0) by the one completer that wins, or by the worker when the
	// process ends.
	token atomic.Uint64

	// Written by the dispatching worker before token is armed; read by the
	// winning completer.
	s    *Scheduler
	p    *proc
	tag  uint64
	node *mpsc.Node[Event]

	// Worker-only: the gen of the current use, and the index in
	// p.outstanding.
	gen uint64
	idx int

	// answer: answerAwaited while StepOutput.Command waits in the
	// dispatch for the handler's answer, else answerNone. Set to
	// awaited by the worker before it dispatches; then one CAS decides
	// between the winning completer (awaited → given: it stored the
	// completion in answered, which the worker reads after seeing
	// given) and the worker once the handler returned (awaited → none:
	// the completion comes as an event).
	answer   atomic.Uint32
	answered Event
}

// yieldRec.answer's values.
const (
	answerNone uint32 = iota
	answerAwaited
	answerGiven
)

// dispatchNow is StepOutput.Command on w, stepping p.
func (w *worker) dispatchNow(p *proc, tag uint64, command string, args payload.Payloads) (Event, bool) {
	if w.nowRec != nil { // an earlier Command's Dispatch panicked, and the step went on
		w.settleNow()
	}
	r := w.arm(p, tag)
	r.answer.Store(answerAwaited)
	w.nowRec = r
	w.s.dispatcher.Dispatch(w.call(p, r, command, args))
	w.nowRec = nil
	if p.home != nil && r.answer.Load() == answerAwaited {
		// A homed process's handler that answers from a goroutine it
		// starts (go c.Complete(...)) has put that goroutine next in line
		// on this P: let it run once, and its answer most likely comes
		// back here, with no yield, no event and no signal to the home —
		// the home's yieldFirst (home.go), done before the step unwinds.
		runtime.Gosched()
	}
	if r.answer.CompareAndSwap(answerAwaited, answerNone) {
		return Event{}, false // answered later, from anywhere: an event
	}
	// answerGiven: the CAS that failed saw the completer's, which
	// stored answered before it.
	ev := r.answered
	r.answered = Event{}
	r.answer.Store(answerNone)
	if len(w.nodes) < maxFreeNodes { // the node it would have come in
		w.nodes = append(w.nodes, r.node)
	}
	w.retire(p, r)
	return ev, true
}

// settleNow ends the wait of a Command whose Dispatch panicked (w.nowRec):
// nobody will read an answer left in its record, so the answer comes as
// the tag's event, as for a Command that gave up waiting. A completer
// that has not answered yet finds the record no longer awaited and
// sends the event itself; one that has answered into the record has its
// answer sent here. Without this, a Step that recovers the panic and
// waits for the tag never gets the answer, though Complete reported it
// delivered (TestCommandAnswerAfterDispatchPanic).
func (w *worker) settleNow() {
	r := w.nowRec
	w.nowRec = nil
	if r.answer.CompareAndSwap(answerAwaited, answerNone) {
		return
	}
	ev := r.answered // answerGiven: Tag set by the completer
	r.answered = Event{}
	r.answer.Store(answerNone)
	p, n := r.p, r.node
	ev.rec = r
	n.Value = ev
	p.events.Push(n)
	w.s.wake(p, false, nil) // p is Running: flagWoken, so it is stepped again
}

// HandlerFunc handles one command. It returns at once, having called
// c.Complete or c.Fail or arranged for them to be called later. A non-nil
// error fails the yield with it (return one only if you did not complete).
type HandlerFunc func(c Call) error

// Registry is a Dispatcher that routes calls by command name. Register
// handlers before the scheduler starts running processes that use them, or
// at any time: lookups are lock-free and see a consistent table.
type Registry struct {
	mu       sync.Mutex // serializes Register
	handlers atomic.Pointer[map[string]HandlerFunc]
}

// ErrUnknownCommand is wrapped by the error a call to an unregistered
// command fails with.
var ErrUnknownCommand = errors.New("unknown command")

// Register installs h for command name (e.g. "time.sleep"), replacing any
// earlier handler.
func (r *Registry) Register(name string, h HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.handlers.Load()
	next := make(map[string]HandlerFunc, 1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[name] = h
	r.handlers.Store(&next)
}

// Dispatch runs the handler for c.Command. An unknown command, a handler
// error and a handler panic each fail the yield with an error that says so.
func (r *Registry) Dispatch(c Call) {
	var h HandlerFunc
	if m := r.handlers.Load(); m != nil {
		h = (*m)[c.Command]
	}
	if h == nil {
		c.Fail(fmt.Errorf("%w %q", ErrUnknownCommand, c.Command))
		return
	}
	if err := safeCall(h, c); err != nil {
		c.Fail(err)
	}
}

// safeCall runs h, turning a panic into an error.
func safeCall(h HandlerFunc, c Call) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Where: "command " + c.Command, Value: v, Stack: debug.Stack()}
		}
	}()
	if err := h(c); err != nil {
		return fmt.Errorf("%s: %w", c.Command, err)
	}
	return nil
}

// PanicError is what a panic in a handler or a process becomes.
type PanicError struct {
	Where string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic in %s: %v", e.Where, e.Value) }
