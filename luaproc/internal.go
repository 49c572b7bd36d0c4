package luaproc

// Go panics inside a process: luarun's bugs, contained.
//
// A Go panic inside a built-in (a library function, a command's Lua
// side, the interpreter itself) ends the process that was running it,
// and only that process, with "internal error: <panic>", and is logged
// at error level with its Go stack: the crash report to file as a bug.
//
// pcall does not catch one, nor does coroutine.resume: the states are
// made with lua.Options.PropagateGoPanics, so the panic leaves every
// coroutine and protected call of the process (lua/gopanic.go) up to
// the step, where the worker recovers it and asks the process for its
// error (StepPanicked). A panic means luarun's own invariants
// broke mid-operation — a mailbox, a table or the interpreter's stacks
// may be half-updated — so the process's code must not go on as if it
// were a Lua error it could handle; Lua 5.1 has no way to catch a crash
// in C either. The state is not recycled (p.err is set).
//
// A panic in an I/O command's goroutine, which shares nothing with the
// process's state, fails that call instead (commands.IO.start): the
// script gets nil and "panic in command ...", as for a handler's panic.

import (
	"fmt"
	"runtime/debug"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/scheduler"
)

// internalError makes the process's error for a Go panic recovered
// with value v, and logs the crash report.
func (p *luaProcess) internalError(v any) *ScriptError {
	stack := []byte(nil)
	if gp, ok := v.(*lua.GoPanic); ok {
		v, stack = gp.Value, gp.Stack
	}
	if stack == nil {
		stack = debug.Stack()
	}
	msg := fmt.Sprintf("internal error: %v", v)
	if !p.rt.quietCrashes {
		p.rt.logger.Error("process crashed: "+msg+" (a bug in luarun: please report it with this stack)",
			"pid", int64(p.pid), "entry", p.entryName(), "stack", string(stack))
	}
	return &ScriptError{Message: msg, entry: p.entryName(), internal: true}
}

// StepPanicked implements scheduler.PanicHandler: the worker recovered
// a Go panic v that escaped the step — from a task's resume (any task:
// no layer below recovers), delivering messages, completing a yield —
// and the process ends with an internal error, its crash logged with
// the stack (the worker calls this while the panic's frames are still
// there to print). Its tasks die with it.
func (p *luaProcess) StepPanicked(v any) error {
	p.out = nil // the step's output is not the process's past the step
	ie := p.internalError(v)
	p.done, p.result, p.err = true, nil, ie // even if it came after the end
	p.ready, p.receivers, p.current = nil, nil, nil
	return ie
}

var _ scheduler.PanicHandler = (*luaProcess)(nil)

// ioPanicked is commands.IO.OnPanic: the crash report of a panic on an
// I/O goroutine (the call it ran, if any, fails with it).
func (rt *Runtime) ioPanicked(pe *scheduler.PanicError) {
	if rt.quietCrashes {
		return
	}
	rt.logger.Error(pe.Error()+" (a bug in luarun: please report it with this stack)", "stack", string(pe.Stack))
}
