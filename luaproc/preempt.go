package luaproc

// Preemption: a step ended between two instructions, at the scheduler's
// request (scheduler.Preempter), to continue later.
//
// The scheduler asks when another process needs the goroutine this
// step runs on: a process whose receive runs this one's step nested
// inside it (scheduler/nested.go) has been sent something, or killed,
// and cannot see it until this step returns. Preempt sets preemptFlag;
// the coroutine running checks it before its next instruction
// (checkInterrupt) and, where a blocking call could yield, yields there
// (lua.Preemption): the task's own coroutine with a marked yield, a
// coroutine of pcall or of the script with the command marker, which
// the prelude forwards out to the task as it forwards a blocking call's.
// run then puts the task back among the ready ones, the step ends with
// StatusContinue, and the next step resumes the task with no values:
// the instruction it stopped before runs then.
//
// While a blocking call's marker, or an earlier preemption's, is being
// forwarded out to the task (p.reqAt set), a preemption waits too: it
// would replace the request, and the forwarded marker would then reach
// run with none. The flag stays set; the step ends or goes on as the
// forwarded request decides, and a later instruction yields.
//
// Where a blocking call could not yield (a metamethod, a comparator, a
// gsub callback, a for iterator, a debug hook, an xpcall handler before
// its error unwound, a receive{match=} function) the flag stays set and
// the coroutine yields at its first instruction after it: a long
// computation inside one holds the step until it returns, as it holds a
// kill of the process itself (which raises there) no longer than the
// instruction's check. Until then every instruction calls
// checkInterrupt, which answers such a refusal with two loads and a
// compare in the common case (a loop nested in a call from Go:
// lua.LState.CanYield).

import (
	lua "github.com/luarun/luarun/lua"
)

// preemptMarked and preemptForward are the two preemptions: of a
// task's own coroutine (resumed by resumeStarted, which reads the
// marked yield), and of a coroutine nested in it (its yield of the
// command marker is forwarded by the prelude).
var (
	preemptMarked  = &lua.Preemption{Marked: true}
	preemptForward = &lua.Preemption{Values: []lua.LValue{cmdMarker}}
)

// Preempt implements scheduler.Preempter: the running step ends at the
// next instruction that can yield (see above). Safe from any goroutine;
// a step that is not running sees the flag at its next instruction (a
// later step ends early once, and continues: harmless).
func (p *luaProcess) Preempt() { p.lctx().interrupt.Flag.Or(preemptFlag) }

// preemption answers the preemption flag before an instruction of
// coroutine L: the lua.Preemption that yields L there, with the task's
// request set to say so, or nil where L cannot yield (the flag stays
// set, so the next instruction asks again).
//
// It consumes the flag, so it must answer nil wherever lua would not
// yield: in its VM loop, L's current frame is the Lua function whose
// instruction is next; a long Go function's Tick or CheckInterrupt (a
// concat, a parse, os.execute's wait) asks with that Go function's frame
// current, and lua ignores a Preemption there (interrupt.go).
func (p *luaProcess) preemption(L *lua.LState) error {
	t := p.current
	if t == nil || L.Parent == nil || !L.CanYield() || p.inMatch > 0 || p.procMore != nil && p.xpRunning > 0 {
		return nil
	}
	// A blocking call's (or a preemption's) marker is on its way out to
	// the task (prelude.lua's pass, pcall_step): p.reqAt says where its
	// request is, and the marker's yield ends this resume as soon as it
	// reaches the task. A preemption now would replace the request.
	if p.reqAt != reqNone {
		return nil
	}
	if f := currentFrame(L); f == nil || f.Fn.IsG { // not the VM loop: Tick's check
		return nil
	}
	if !canYieldTo(L, t.co) || inHook(L, t.co) || blockContext(L, currentFrame(L), t.co, p.tpl.sortFn) != "" {
		return nil
	}
	p.lctx().interrupt.Flag.And(^preemptFlag)
	p.reqAt = reqPreempt
	t.wants = -1 // resumed with no values (lua drops any)
	if L == t.co {
		return preemptMarked
	}
	return preemptForward
}
