package luaproc

// The types an application that embeds luarun touches, so that it imports
// luaproc alone: a process's PID and Handle, a command's Handler and its
// Call, the runtime's Stats, and the errors to test with errors.Is and
// errors.As. The scheduler package underneath stays importable for those
// who want its full surface (Runtime.SchedulerStats), never required.
//
// PID and ShutdownError are aliases: a PID is the scheduler's own number
// (it travels in messages, between nodes and into Lua as a number), and a
// shutdown's error is the scheduler's. Call and Handle are luaproc's own
// small values wrapping the scheduler's; Handler is wrapped once, when it
// is registered.

import (
	"context"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// PID identifies a process (or an Inbox) of a Runtime: a number, never
// reused within one Runtime, that Lua sees as a number (process.self()).
// Pass one to Lua as it is or as int64(pid); a number Lua gives back is
// an int64, and PID(n) makes it a PID again. PID 0 is no process (the
// sender of Runtime.Send's messages). On a node of a cluster
// (Options.Cluster) a PID also names the node that started the process:
// pid.Node() is that node's number, 0 for a runtime alone.
//
// PID is the scheduler's type under another name (an alias), so a PID is
// the same value everywhere.
type PID = scheduler.PID

// Handler handles one call of a command an application registered
// (Runtime.Register). It runs on the goroutine of the worker that runs
// the calling process and must return at once, having called c.Complete
// or c.Fail, or having arranged for one of them to be called later from
// any goroutine (the process waits, yielded, without holding a worker).
// Returning an error fails the call with it, if c was not completed
// already; a panic is such an error too.
type Handler func(c Call) error

// Call is one call of a command from Lua: the process that called, the
// command, its arguments, and the way to answer. It is a small value:
// keep it (copy it) to answer later. The first Complete or Fail answers;
// any later one, or one after the process ended (killed, or its context
// done), is dropped, and reports false.
type Call struct {
	// PID is the calling process.
	PID PID
	// Command is the command's registered name ("db.query").
	Command string
	// Args are the Lua call's arguments as payload values (nil, bool,
	// int64, float64, string, []any, map[string]any, map[any]any):
	// copies the handler owns.
	Args []any
	// Ctx is the calling process's context: it carries the values of
	// the context the process was started with (Runtime.Start), and is
	// done when the process ends (killed, cancelled, or that context
	// done). A handler that works in the background should watch it.
	Ctx context.Context

	completer scheduler.Completer
}

// Complete answers the call: the Lua call returns results, each
// converted by payload.FromGo's rule (docs/embedding.md). Complete()
// returns nothing, Complete(rows) one value, Complete(nil, "not found")
// two. A result with no Lua form makes the Lua call return nil and the
// conversion's error. It reports whether the answer was delivered.
func (c Call) Complete(results ...any) bool {
	if len(results) == 1 {
		if _, several := results[0].(payload.Payloads); !several {
			return c.completer.Complete(results[0]) // the scheduler's one value
		}
	}
	// a copy: results itself does not escape, so the caller's slice
	// stays on its stack (one value, the common case, costs nothing)
	return c.completer.Complete(append(payload.Payloads(nil), results...))
}

// Fail answers the call with an error: the Lua call returns nil and
// err's message. It reports whether the answer was delivered.
func (c Call) Fail(err error) bool {
	return c.completer.Fail(err)
}

// schedulerHandler adapts h to the scheduler's handler type.
func schedulerHandler(h Handler) scheduler.HandlerFunc {
	return func(c scheduler.Call) error {
		return h(Call{PID: c.PID, Command: c.Command, Args: c.Args, Ctx: c.Ctx, completer: c.Completer})
	}
}

// Handle refers to a process a Runtime started (Start, Lookup). It is a
// small value; copy it freely.
type Handle struct {
	h scheduler.Handle
}

// PID returns the process's PID.
func (h Handle) PID() PID { return h.h.PID() }

// Done is closed when the process has ended.
func (h Handle) Done() <-chan struct{} { return h.h.Done() }

// Wait blocks until the process ends, and returns the entry point's
// return values (payload values) or the process's error: a *ScriptError,
// *EntryError, *KilledError, *MemoryError, or ErrShutdown or
// ErrAbandoned wrapped by Shutdown's end. If ctx is done first, Wait
// returns ctx's error, and the process runs on.
func (h Handle) Wait(ctx context.Context) ([]any, error) {
	res, err := h.h.Wait(ctx)
	return res, err
}

// Result is Wait's answer without the waiting: valid once Done is closed.
func (h Handle) Result() ([]any, error) {
	res, err := h.h.Result()
	return res, err
}

// Stats is a snapshot of a Runtime's counters: how its processes ended,
// what became of messages and command answers, and the scripts it
// compiled. Counters only grow; Live is the processes not yet ended.
// Every process started ends exactly one way, so at any time
//
//	Started = Returned + Failed + Killed + Cancelled + Abandoned + Live
//
// (each counter read at once, not as one snapshot: a process ending
// while Stats runs may show in one and not another).
// Runtime.SchedulerStats has the scheduler's own counters.
type Stats struct {
	// Started counts the processes started: Start, process.spawn and
	// the rest, inboxes included (a start refused is not counted).
	Started uint64
	// Returned: ended with their entry point's return values.
	Returned uint64
	// Failed: ended with an error of their own (a Lua error, a missing
	// entry point, memory).
	Failed uint64
	// Killed: ended by Kill, process.kill, the end of Start's context,
	// or Options.MaxStep (StepLimited counts those too).
	Killed uint64
	// Cancelled: ended by Shutdown's cancel.
	Cancelled uint64
	// Abandoned: still running at Shutdown's deadline.
	Abandoned uint64
	// Live: started and not yet ended.
	Live int64
	// Refused: starts refused at Options.MaxProcs.
	Refused uint64
	// SlowSteps counts processes logged for a step (Lua code running
	// without a blocking call) longer than a second; StepLimited those
	// killed by Options.MaxStep.
	SlowSteps, StepLimited uint64

	// MessagesDropped: messages accepted (process.send, Send) that their
	// process never took: still waiting when it ended.
	MessagesDropped uint64
	// MessagesRefused: sends refused because the mailbox was full
	// (Options.MaxMailbox).
	MessagesRefused uint64
	// MessagesForwarded: messages handed to the cluster for processes on
	// other nodes (Options.Cluster).
	MessagesForwarded uint64
	// CompletionsDropped: command answers (Call.Complete, Call.Fail)
	// dropped because they came after the process ended, or twice.
	CompletionsDropped uint64
	// RepliesDropped: process.reply answers that came after their call
	// had given up (its timeout).
	RepliesDropped int64

	// ScriptsCompiled counts compilations: LoadString, and each file
	// LoadFile, process.spawn_file or require compiled (once per file;
	// a compile that failed is tried again next time, and counted again).
	ScriptsCompiled int64
}

// Stats returns the runtime's counters.
func (rt *Runtime) Stats() Stats {
	s := rt.sched.Stats()
	return Stats{
		Started: s.Submitted, Returned: s.Completed, Failed: s.Failed, Killed: s.Killed,
		Cancelled: s.Cancelled, Abandoned: s.Abandoned, Live: s.LiveProcesses, Refused: s.RefusedProcesses,
		SlowSteps: s.SlowSteps, StepLimited: s.StepLimited,
		MessagesDropped: s.DroppedMessages, MessagesRefused: s.RefusedMessages, MessagesForwarded: s.Forwarded,
		CompletionsDropped: s.DroppedCompletions, RepliesDropped: rt.droppedReplies.Load(),
		ScriptsCompiled: rt.files.compiled.Load(),
	}
}

// SchedulerStats returns the counters of the scheduler underneath: those
// Stats has under the scheduler's names, and how the workers shared the
// work (steps, steals, parks, wakeups, watchdog helpers...).
func (rt *Runtime) SchedulerStats() scheduler.Stats {
	return rt.sched.Stats()
}

// Errors a Runtime's calls and processes report, to test with errors.Is.
var (
	// ErrClosed is the error (wrapped) of a call that needs a running
	// runtime after Shutdown began: Register, RegisterGoModule,
	// RegisterLuaModule, Start, StartMain, NewInbox.
	ErrClosed = scheduler.ErrClosed
	// ErrNoProcess: the PID does not exist or its process has ended
	// (Send, Kill, Inbox.Link, Inbox.Call...).
	ErrNoProcess = scheduler.ErrNoProcess
	// ErrMailboxFull: a send would pass Options.MaxMailbox.
	ErrMailboxFull = scheduler.ErrMailboxFull
	// ErrTooManyProcesses: a start would pass Options.MaxProcs.
	ErrTooManyProcesses = scheduler.ErrTooManyProcesses
	// ErrNameTaken: RegisterName of a name another process holds.
	ErrNameTaken = scheduler.ErrNameTaken
	// ErrShutdown ends the processes Shutdown cancels.
	ErrShutdown = scheduler.ErrShutdown
	// ErrAbandoned ends the processes still running at Shutdown's
	// deadline.
	ErrAbandoned = scheduler.ErrAbandoned
)

// ShutdownError is Shutdown's error when its context ended before every
// process had: Abandoned lists the processes it gave up on (each ended
// with ErrAbandoned). It is the scheduler's type (an alias).
type ShutdownError = scheduler.ShutdownError

// Null is JSON's null as a Go value (json.null in Lua): where nil would
// leave a hole, in a list or a map. It is payload.Null.
var Null = payload.Null

// ValueError is the error of a Go value with no Lua form (or a Lua value
// with no Go form): Path names the value ("arg2.rows[1].C"), Reason why.
// It is the payload package's type (an alias).
type ValueError = payload.ValueError

// StepLimitError is what a *ScriptError unwraps to when Options.MaxStep
// ended the process: its PID and the limit its step ran past. It is the
// scheduler's type (an alias).
type StepLimitError = scheduler.StepLimitError
