package luaproc

import (
	"context"
	"sync/atomic"

	lua "github.com/luarun/luarun/lua"
)

// luaCtx is the context of every coroutine a process runs, and the
// interrupt they check before every instruction (gopher-lua's
// SetInterrupt, luarun's fork: one atomic load per instruction, where a
// context's check is a channel poll). It also carries the process, for
// the shared module functions (procOf).
type luaCtx struct {
	context.Context // the process's scheduler context
	p               *luaProcess

	// interrupt.Flag holds the reasons to stop the running code:
	// probeFlag — the watchdog asks where it is (SlowStep sets it from
	// the watchdog's goroutine); raiseFlag — raise raiseErr at the next
	// instruction of raiseIn (set and cleared on the process's
	// goroutine); cancelFlag — the context was cancelled (Interrupt, from
	// the goroutine that cancelled it). checkInterrupt answers them on the
	// process's goroutine. slowFor: how long the step had run when
	// probed, in nanoseconds.
	interrupt lua.Interrupt
	slowFor   atomic.Int64
	raiseErr  error
	raiseIn   *lua.LState // the coroutine that is to raise it
}

const (
	probeFlag uint32 = 1 << iota
	raiseFlag
	cancelFlag
	preemptFlag // the scheduler asks the step to end soon (preempt.go)
)

// raiseAtNext makes the next instruction coroutine th runs raise err.
// The coroutines that resumed th run first (the prelude passing the
// resume in): they must not raise it.
func (c *luaCtx) raiseAtNext(err error, th *lua.LState) {
	c.raiseErr, c.raiseIn = err, th
	c.interrupt.Flag.Or(raiseFlag)
}

type procKey struct{}

// initCtx makes c, a zero luaCtx, process p's context below ctx.
func (c *luaCtx) initCtx(ctx context.Context, p *luaProcess) {
	c.Context, c.p = ctx, p
	c.interrupt.Check = checkInterrupt
}

// lctx is the context of p's coroutines (its own, made by Init).
func (p *luaProcess) lctx() *luaCtx { return &p.own.ctx }

// ctx is p's scheduler context (Init's; nil before Init).
func (p *luaProcess) ctx() context.Context { return p.own.ctx.Context }

// adopt makes co one of the process's coroutines: with its context, and
// checking its interrupt.
func (c *luaCtx) adopt(co *lua.LState) {
	co.SetContext(c)
	co.SetInterrupt(&c.interrupt)
}

// Interrupt implements scheduler.Interrupter: the process's context has
// been cancelled, and its running code stops at its next instruction.
func (p *luaProcess) Interrupt() { p.lctx().interrupt.Flag.Or(cancelFlag) }

// checkInterrupt is called by gopher-lua before an instruction of coroutine
// L when the process's interrupt flag is set; an error it returns is
// raised there. A cancelled context raises at every instruction (as a
// done context does), and the first time records where the process's
// code stopped, before pcall or a coroutine boundary turns the error into
// another raised further out.
func checkInterrupt(L *lua.LState) error {
	c := procOf(L).lctx()
	f := c.interrupt.Flag.Load()
	if f&probeFlag != 0 {
		c.p.answerProbe()
	}
	if f&raiseFlag != 0 && L == c.raiseIn {
		c.interrupt.Flag.And(^raiseFlag)
		err := c.raiseErr
		c.raiseErr, c.raiseIn = nil, nil
		return err
	}
	if f&cancelFlag != 0 {
		if err := c.Context.Err(); err != nil {
			if more := c.p.more(); more.stoppedAt == "" {
				more.stoppedAt = scriptWhere(L)
			}
			return err
		}
	}
	if f&preemptFlag != 0 {
		return c.p.preemption(L)
	}
	return nil
}

// Value answers procKey (for coroutines a script makes, whose contexts
// are children of this one) and delegates the rest.
func (c *luaCtx) Value(key any) any {
	if key == (procKey{}) {
		return c.p
	}
	return c.Context.Value(key)
}

// paddedResume is coroutine.resume for scripts: it fits the values to
// what the suspended call wants (see fitValues) and resumes.
//
// It refuses the coroutines the process's tasks run in (coroutine.running
// hands them out): resuming one would run a task the process believes is
// waiting for something.
func paddedResume(rawResume lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		th, p := L.CheckThread(1), procOf(L)
		if isTask(th) {
			L.Push(lua.LFalse)
			L.Push(lua.LString("cannot resume a coroutine that runs a task of this process (the process or a process.all function)"))
			return 2
		}
		if n := wantedResults(th); n >= 0 {
			for L.GetTop()-1 < n {
				L.Push(lua.LNil)
			}
			L.SetTop(n + 1)
		}
		if !p.takeForwarded(L, th) {
			L.SetTop(0)
			L.Push(lua.LFalse)
			L.Push(lua.LString("cannot resume non-suspended coroutine"))
			return 2
		}
		undo, ok := p.nest()
		if !ok {
			L.Push(lua.LFalse)
			L.Push(lua.LString(nestError))
			return 2
		}
		n := rawResume(L)
		undo()
		p.noteForwarded(L, th, n)
		if n >= 2 && L.Get(-n) == lua.LFalse {
			p.failLoads(th) // th died: its module chunks were unwound
			at := L.GetTop() - n + 2
			L.Replace(at, overflowError(th, unwhere(L.Get(at))))
		}
		return n
	}
}

// pstart runs fn(...) in a new coroutine for pcall and xpcall (see
// prelude.lua) and answers the coroutine, a status (0 failed, 1 returned,
// 2 yielded) and the values. The coroutine is made from the process's
// main state and shares the process's context: unlike coroutine.create,
// it gets no context of its own to make and cancel.
func (p *luaProcess) pstart(L *lua.LState) int {
	// fn runs through prelude.lua's counted trampoline, with fn as its first
	// argument: a blocking Go function must not become the coroutine's
	// bottom frame (fn itself, or tail-called by fn).
	L.CheckFunction(1)
	args := make([]lua.LValue, L.GetTop())
	for i := range args {
		args[i] = L.Get(i + 1)
	}
	fn := p.tpl.counted
	if p.depth >= maxNest { // refused before a coroutine is taken for it
		L.Push(lua.LNil)
		L.Push(lua.LNumber(0))
		L.Push(lua.LString(scriptWhere(L) + " " + nestError))
		return 3
	}
	co := p.takeThread()
	L.Push(co)
	n := p.pushResume(L, co, fn, args)
	return 1 + n
}

// maxFreeThreads bounds the coroutines a process keeps for pcall.
const maxFreeThreads = 8

// takeThread returns a coroutine for pcall: a finished one if there is
// one, else a new one made from the main state, with the process's
// context. Scripts never hold these (coroutine.running skips them), so
// one that finished cleanly can be reused.
func (p *luaProcess) takeThread() *lua.LState {
	if n := len(p.freeThreads); n > 0 {
		co := p.freeThreads[n-1]
		p.freeThreads = p.freeThreads[:n-1]
		p.pthreads[co] = true
		return co
	}
	co, _ := p.L.NewThread()
	p.lctx().adopt(co)
	if p.pthreads == nil {
		p.pthreads = map[*lua.LState]bool{}
	}
	p.pthreads[co] = true
	return co
}

// dropThread gives back a coroutine takeThread gave, used only for a
// call from Go (CallByParam), never resumed.
func (p *luaProcess) dropThread(co *lua.LState) {
	delete(p.pthreads, co)
	co.SetTop(0)
	if currentFrame(co) == nil && len(p.freeThreads) < maxFreeThreads {
		p.freeThreads = append(p.freeThreads, co)
	}
}

// releaseThread forgets co once it is dead, and keeps it for reuse if it
// returned normally (its stack is empty).
func (p *luaProcess) releaseThread(co *lua.LState) {
	if !co.Dead {
		return // suspended: pcall_step will resume it
	}
	delete(p.pthreads, co)
	co.SetHook(nil)
	if currentFrame(co) == nil && len(p.freeThreads) < maxFreeThreads {
		co.Dead, co.Parent = false, nil
		co.SetTop(0)
		p.freeThreads = append(p.freeThreads, co)
	}
}

// running is coroutine.running: it answers the coroutine the script sees,
// skipping the ones pcall and xpcall run their function in, and nil in
// the process's own code (its tasks), as Lua 5.1 does in the main thread.
func (p *luaProcess) running(L *lua.LState) int {
	th := L
	for p.pthreads[th] && th.Parent != nil {
		th = th.Parent
	}
	if isTask(th) { // the process's own code: Lua's main thread
		L.Push(lua.LNil)
		return 1
	}
	L.Push(th)
	return 1
}

// presume resumes a coroutine pstart made, with the values fitted to what
// its suspended call wants; it answers like pstart, without the coroutine.
func (p *luaProcess) presume(L *lua.LState) int {
	co := L.CheckThread(1)
	args := make([]lua.LValue, L.GetTop()-1)
	for i := range args {
		args[i] = L.Get(i + 2)
	}
	return p.pushResume(L, co, nil, fitValues(args, wantedResults(co)))
}

// pushResume resumes co, a coroutine of pcall or xpcall, and pushes what
// pstart and presume answer; then it forgets co if it is dead (and keeps
// it for reuse if it returned).
func (p *luaProcess) pushResume(L, co *lua.LState, fn *lua.LFunction, args []lua.LValue) int {
	defer p.releaseThread(co)
	undo, ok := p.nest()
	if !ok { // co is never resumed again: forget it
		delete(p.pthreads, co)
		L.Push(lua.LNumber(0))
		L.Push(lua.LString(scriptWhere(L) + " " + nestError))
		return 2
	}
	co.InheritHook(L) // co runs L's code: L's hook (debuglib.go)
	st, err, vals := L.Resume(co, fn, args...)
	undo()
	switch {
	case err != nil:
		p.failLoads(co) // the error unwound the module chunks co ran
		L.Push(lua.LNumber(0))
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok && ae.Object != nil {
			obj = ae.Object
		}
		L.Push(overflowError(co, unwhere(obj)))
		return 2
	case st == lua.ResumeOK:
		// The body is prelude.lua's counted trampoline: the number of
		// results comes first (gopher-lua reports one nil and no values
		// alike), then the results, which it pads with nils.
		L.Push(lua.LNumber(1))
		n := 0
		if len(vals) > 0 {
			if c, ok := vals[0].(lua.LNumber); ok {
				n = int(c)
			}
			vals = vals[1:]
		}
		vals = fitValues(vals, n)
	default:
		L.Push(lua.LNumber(2))
	}
	for _, v := range vals {
		L.Push(v)
	}
	return 1 + len(vals)
}
