package scheduler

import (
	"context"

	"github.com/luarun/luarun/payload"
)

// PID identifies a process. PIDs start at 1 and are never reused within one
// Scheduler.
type PID uint64

// Process is a state machine the scheduler steps. Nothing in it may block:
// work that waits (I/O, timers, other processes) is expressed as yields,
// which command handlers complete.
type Process interface {
	// Init prepares the process to run entry point method with input. It
	// runs on the goroutine that calls Submit. An unknown method is an error
	// that names the methods that exist. ctx is the process's context: it is
	// cancelled when the process is killed or the scheduler shuts down.
	Init(ctx context.Context, method string, input payload.Payloads) error
	// Step advances the process with the events that arrived since the last
	// step (in arrival order; completions may come in any order relative to
	// the yields) and describes what happens next in out, which the
	// scheduler resets before each call. An error ends the process with that
	// error. The events slice is only valid during the call. Step may be
	// called with no new events (a wakeup whose event was still being
	// queued); it should then keep waiting for what it waits for.
	Step(events []Event, out *StepOutput) error
	// Close frees the process's resources. It is called exactly once, after
	// the last Step, on whichever goroutine ends the process.
	Close()
}

// PanicHandler is a Process that makes its own error of a Go panic that
// escaped its Step (luaproc: an internal error, with the crash logged).
// The worker recovers such panics once around its loop, not around every
// step, and ends the process with what StepPanicked returns, called
// where the panic's stack can still be printed (debug.Stack); any other
// Process, or a StepPanicked that returns nil, ends with a *PanicError.
// Either way the step's yields are dropped and the worker goes on.
type PanicHandler interface {
	StepPanicked(v any) error
}

// Ender is a Process that hears how it ended: Ended is called once,
// after Close, with its results and error, before its monitors and links
// fire. What it sends then precedes its down and exit signals on a
// Relay's ordered path (luaproc sends a spawn_on child's results to the
// process that waits for them on another node).
type Ender interface {
	Ended(result payload.Payloads, err error)
}

// EventType says what an Event carries.
type EventType uint8

const (
	// EventYieldComplete answers a yield: Tag is the yield's tag, and Data
	// its result or Error its failure.
	EventYieldComplete EventType = iota + 1
	// EventMessage is a message from another process (From) or from Go
	// (From == 0), in Data.
	EventMessage
	// EventCancel asks the process to end: it was killed (Error carries the
	// reason) or the scheduler is shutting down. The process may still yield
	// commands while it cleans up.
	EventCancel
	// EventDown: a process this one monitors has ended (links.go). Tag is
	// the monitor's reference, From the process, Error how it ended: nil
	// if it returned, its error, or ErrNoProcess if it had ended (or never
	// existed) when the monitor was made. Like a message, it does not wake
	// a process waiting for a completion.
	EventDown
	// EventExit: a process linked to this one has ended (links.go); From
	// and Error as for EventDown. It wakes the process whatever it waits
	// for: the process decides whether to end (Erlang's exit signal) or
	// to take it as an event (trapping exits).
	EventExit
)

func (t EventType) String() string {
	switch t {
	case EventYieldComplete:
		return "yield-complete"
	case EventMessage:
		return "message"
	case EventCancel:
		return "cancel"
	case EventDown:
		return "down"
	case EventExit:
		return "exit"
	}
	return "invalid"
}

// Event is one input to Step.
type Event struct {
	Type  EventType
	Tag   uint64 // the yield this completes (EventYieldComplete); the monitor (EventDown)
	From  PID    // the sender (EventMessage), the ended process (EventDown, EventExit); 0: Go
	Data  any    // the result, or the message payload
	Error error  // set when the yield failed, or the reason for a cancel

	rec *yieldRec // the dispatch record a completion answers (scheduler-internal)
}

// Status is what a process does after a step.
type Status uint8

const (
	// StatusYield: wait for the completion of a yield (this step's or an
	// earlier one's). Messages that arrive meanwhile are queued and delivered
	// with the next step; they do not wake the process.
	StatusYield Status = iota
	// StatusReceive: wait for a message or a completion, whichever comes first.
	StatusReceive
	// StatusContinue: run again soon, after other ready processes.
	StatusContinue
	// StatusDone: the process finished; Result holds its results.
	StatusDone
)

// Yield is a command a step asks Go to run.
type Yield struct {
	Tag     uint64 // chosen by the process; echoed in the completion
	Command string // e.g. "time.sleep"; the dispatcher routes by this name
	Args    payload.Payloads
}

// StepOutput is what a step writes. The scheduler reuses it between steps:
// a process must not keep references to its slices.
type StepOutput struct {
	Status Status
	Yields []Yield          // dispatched after the step, in order
	Result payload.Payloads // with StatusDone
	// Backlog is how many of the messages it was given the process holds
	// unread after the step (a mailbox of its own), set by every step (it
	// starts at 0): they still count against Options.MaxMailbox, and as
	// dropped if the process ends. A process that takes every message as
	// it comes leaves it 0.
	Backlog int

	// Set by the worker for the duration of Step (see Send).
	w    *worker
	p    *proc
	self PID
	// nestedLeft: the nested steps this step may still run (RunHanded).
	nestedLeft int
}

// Send is Scheduler.Send from this process, for use inside Step only. A
// process it wakes goes onto the running worker's own deque rather than the
// global queue (cheaper, and cache-warm). It fails outside Step, and must
// not be called from another goroutine during Step.
func (o *StepOutput) Send(to PID, msg any) error {
	if o.w == nil {
		return errSendOutsideStep
	}
	return o.w.s.send(o.w, o.self, to, msg)
}

// Spawn is Scheduler.Submit from this process, for use inside Step only:
// the new process starts on the running worker's own deque. It fails
// outside Step, and must not be called from another goroutine during Step.
func (o *StepOutput) Spawn(p Process, method string, input payload.Payloads) (Handle, error) {
	if o.w == nil {
		return Handle{}, errSpawnOutsideStep
	}
	return o.w.s.submit(o.w, p, method, input)
}

// SpawnWith is Scheduler.SubmitWith from this process, for use inside
// Step only (see Spawn).
func (o *StepOutput) SpawnWith(p Process, method string, input payload.Payloads, opts SubmitOptions) (Handle, uint64, error) {
	if o.w == nil {
		return Handle{}, 0, errSpawnOutsideStep
	}
	return o.w.s.submitWith(o.w, p, method, input, opts)
}

// Command dispatches a command now, from inside Step, where Yield
// dispatches it after the step: the handler runs on this goroutine
// before Command returns. If it answered before returning (Complete or
// Fail called in the handler: a Go function that answers at once),
// Command returns that completion (Tag set) and true, and no event comes
// for it: the process needs no further step to have it. Otherwise it
// returns false, and the completion comes as an EventYieldComplete with
// tag, as a Yield's does. Outside Step it is Yield (and returns false).
// Must not be called from another goroutine during Step.
func (o *StepOutput) Command(tag uint64, command string, args payload.Payloads) (Event, bool) {
	if o.w == nil {
		o.Yield(tag, command, args...)
		return Event{}, false
	}
	return o.w.dispatchNow(o.p, tag, command, args)
}

// Yield appends a yield to the output.
func (o *StepOutput) Yield(tag uint64, command string, args ...any) {
	o.Yields = append(o.Yields, Yield{Tag: tag, Command: command, Args: args})
}

func (o *StepOutput) reset() {
	clear(o.Yields)
	o.Yields = o.Yields[:0]
	o.Status = StatusYield
	o.Result = nil
	o.Backlog = 0
	o.nestedLeft = nestedBudget
}
