package luaproc

// Runaway Lua: busy loops, deep nesting, runaway recursion and os.exit.
//
// The scheduler's watchdog (scheduler/watchdog.go) notices a step that
// runs long. Two things about such a step need the Lua state, which only
// the goroutine running it may touch:
//
//   - Where it is, for the once-per-process warning (SlowStep). Every
//     coroutine of a process reads the process's interrupt flag (luaCtx)
//     before every instruction. So SlowStep, on the watchdog's
//     goroutine, only sets a bit; checkInterrupt, on the goroutine
//     running the loop, sees it at the next instruction and logs the
//     line the loop is at.
//   - The line it was at when MaxStep killed it: the kill cancels the
//     process's context and sets the flag's cancel bit (Interrupt);
//     checkInterrupt raises "file:line: context canceled" at the next
//     instruction, and scriptError turns that into
//     "pid 42 spin.lua:17: ran 2s without blocking".
//
// For that, coroutine.create must give the coroutines it makes the
// process's luaCtx and interrupt (adopt) rather than gopher-lua's
// context.WithCancel child of it (which would also cost a context per
// coroutine).
//
// Nesting: every coroutine resume, pcall and xpcall runs its function on
// the Go stack of the one that called it (gopher-lua's Resume is a Go
// call), as Lua 5.1's C calls do; Lua 5.1 stops at 200 of those with
// "C stack overflow", and so does luarun (nest). Recursion in one
// coroutine stops at its call-stack size: gopher-lua then panics with
// "lua callstack overflow" (its own stack-full check never fires), which
// overflowError turns into Lua's "file:line: stack overflow".

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
)

// maxNest is how deep coroutine resumes, pcalls and xpcalls may nest in a
// process: Lua 5.1's LUAI_MAXCCALLS.
const maxNest = 200

// nestError is the error of a resume or pcall past maxNest.
const nestError = "C stack overflow (coroutines, pcalls and xpcalls nested more than 200 deep)"

// SlowStep implements scheduler.SlowStepper: the running loop logs where
// it is at its next instruction (answerProbe).
func (p *luaProcess) SlowStep(elapsed time.Duration) {
	p.lctx().slowFor.Store(int64(elapsed))
	p.lctx().interrupt.Flag.Or(probeFlag)
}

// answerProbe logs where the process's running code is. It runs on the
// goroutine running the process (from checkInterrupt).
func (p *luaProcess) answerProbe() {
	if p.lctx().interrupt.Flag.And(^probeFlag)&probeFlag == 0 {
		return // answered already
	}
	where := scriptWhere(p.L.G.CurrentThread)
	if where == "" {
		where = p.script.name + ":"
	}
	elapsed := time.Duration(p.lctx().slowFor.Load()).Round(time.Millisecond)
	p.rt.logger.Warn(fmt.Sprintf("pid %d %s has run for %v without blocking (the other processes go on; --max-step kills a step this long)",
		p.pid, where, elapsed))
}

// stepLimitError is the error of a process MaxStep killed; rerr is what
// gopher-lua raised at the instruction it stopped at.
func (p *luaProcess) stepLimitError(t *task, sle *scheduler.StepLimitError, rerr error) error {
	where := ""
	switch msg := errorText(rerr); {
	case p.stoppedWhere() != "": // the innermost coroutine's line (checkInterrupt)
		where = " " + p.stoppedWhere()
	case strings.HasSuffix(msg, ": "+context.Canceled.Error()):
		where = " " + strings.TrimSuffix(msg, " "+context.Canceled.Error())
	}
	se := &ScriptError{Message: fmt.Sprintf("pid %d%s ran %v without blocking", p.pid, where, sle.Limit), cause: sle}
	if t == p.root {
		se.Traceback = p.takeTrace()
	}
	return se
}

// errorText is the message of an error raised in Lua.
func errorText(err error) string {
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		if s, ok := apiErr.Object.(lua.LString); ok {
			return string(s)
		}
	}
	return err.Error()
}

// callstackOverflow is gopher-lua's panic when a coroutine's call stack
// is full.
const callstackOverflow = "lua callstack overflow"

// overflowError turns gopher-lua's callstack overflow, raised in
// coroutine th, into Lua's "file:line: stack overflow" (the position of
// the deepest call left on th); other errors stay as they are.
func overflowError(th *lua.LState, v lua.LValue) lua.LValue {
	if s, ok := v.(lua.LString); !ok || string(s) != callstackOverflow {
		return v
	}
	msg := "stack overflow"
	if where := scriptWhere(th); where != "" {
		msg = where + " " + msg
	}
	return lua.LString(msg)
}

// coCreate is coroutine.create's Go half: gopher-lua's, run with the
// caller's context removed for the moment, so that the new coroutine gets
// no context of its own; it then gets the process's.
func (p *luaProcess) coCreate(L *lua.LState) int {
	L.CheckFunction(1)
	saved := L.RemoveContext()
	n := p.tpl.rawCreate(L)
	L.SetContext(saved)
	if th, ok := L.Get(-1).(*lua.LState); ok {
		p.lctx().adopt(th)
	}
	return n
}

// nest counts one more level of Go-stack nesting (a resume or a pcall)
// and returns its undo, or reports that it would pass maxNest.
func (p *luaProcess) nest() (undo func(), ok bool) {
	if p.depth >= maxNest {
		return nil, false
	}
	p.depth++
	return p.unnest, true
}

func (p *luaProcess) unnest() { p.depth-- }

// ExitError ends a process that called os.exit.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// osExit is os.exit([code]): the program ends through the runtime's
// normal shutdown with that status (Options.Exit), and this process ends
// now — its context is cancelled, so the next instruction raises, and a
// pcall cannot keep it going. code is a number, or a boolean as in Lua
// 5.2 (true: 0, false: 1); none is 0.
func (p *luaProcess) osExit(L *lua.LState) int {
	code := 0
	switch v := L.Get(1).(type) {
	case lua.LBool:
		if !v {
			code = 1
		}
	case *lua.LNilType:
	case lua.LNumber:
		code = int(v)
	default: // a string of a number, as in Lua 5.1
		n, err := strconv.ParseFloat(strings.TrimSpace(lua.LVAsString(v)), 64)
		if err != nil {
			L.ArgError(1, "number expected, got "+v.Type().String())
		}
		code = int(n)
	}
	p.rt.requestExit(code)
	p.rt.sched.Kill(p.pid, &ExitError{Code: code})
	return 0
}

// crashReport logs a process that failed while nothing would hear of it
// (scheduler.Options.OnCrash): one error line, as Erlang's logger does,
// with the script's innermost frame (at) and the whole Lua traceback
// (traceback: its levels as debug.traceback writes them, tail-call
// markers included, one per line — escaped, so the report stays one
// line: logtext.go). A process that a linked failure ended is not
// reported: the failure that started it is, once.
func (rt *Runtime) crashReport(pid scheduler.PID, err error) {
	var le *LinkedError
	if errors.As(err, &le) {
		return
	}
	var se *ScriptError
	if errors.As(err, &se) && se.internal {
		return // reported when it happened, with its Go stack (internal.go)
	}
	entry, where, levels := "?", "", ""
	if errors.As(err, &se) {
		entry = se.entry
		frames := strings.Split(se.Traceback, "\n\t")[1:]
		for _, line := range frames {
			if !strings.HasPrefix(line, "[C]") { // the script's own frame
				where = line
				break
			}
		}
		levels = strings.Join(frames, "\n")
	}
	var ee *EntryError
	if errors.As(err, &ee) {
		if ee.answered {
			return // the requesting node was told instead
		}
		entry = ee.Entry
	}
	kv := []any{"pid", int64(pid), "entry", logText(entry)}
	if where != "" {
		kv = append(kv, "at", logText(where), "traceback", logText(levels))
	}
	rt.logger.Error("process crashed: "+logText(reasonText(err)), kv...) // one line (logtext.go)
}

// exitRequest is the first os.exit of a Runtime's processes.
type exitRequest struct {
	once sync.Once
	fn   func(code int) // Options.Exit
}

func (rt *Runtime) requestExit(code int) {
	rt.exit.once.Do(func() {
		if rt.exit.fn != nil {
			rt.exit.fn(code)
		}
	})
}
