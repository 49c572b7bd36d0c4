package lua

// Interrupting long Go functions. (luarun's fork.)
//
// The VM checks a state's interrupt (SetInterrupt) or context before
// every instruction, but a Go function — the pattern matcher, sort, rep,
// concat, the compiler, an embedder's JSON codec — runs no instructions:
// without help, a kill, a step limit or a shutdown waits until it
// returns, which for a backtracking pattern can be minutes. Such a
// function calls Tick once per step of its work (a step: roughly what a
// VM instruction costs, a few nanoseconds) or TickN for n steps; every
// tickEvery steps that checks in as the VM would, and raises the same
// error there. The check between is a decrement and a branch of a
// per-state counter, so a long loop pays nothing measurable.
//
// A check sends no debug hook events (Lua 5.1 sends none inside a C
// function either); it answers only the interrupt's other reasons.

// tickEvery is how many steps pass between two checks: a few tens of
// microseconds of work, far inside the 10 ms a kill must take effect in.
const tickEvery = 4096

// Tick counts one step of a long-running Go function called by ls (ls
// is the running thread: the LState the function was called with);
// every tickEvery steps it checks ls's interrupt, as CheckInterrupt.
func (ls *LState) Tick() {
	ls.ticks--
	if ls.ticks < 0 {
		ls.tickCheck()
	}
}

// TickN counts n steps (a scan of n bytes, say, counts n/16 or so) as
// Tick does.
func (ls *LState) TickN(n int) {
	if n > int(ls.ticks) { // the budget would go below 0
		ls.tickCheck()
		return
	}
	ls.ticks -= int16(n)
}

//go:noinline
func (ls *LState) tickCheck() {
	ls.ticks = tickEvery
	ls.CheckInterrupt()
}

// CheckInterrupt raises, in ls, the error the VM would raise before its
// next instruction: the interrupt's Check error if its flag has a reason
// set (SetInterrupt), else the context's error if ls's context is done
// (SetContext). It returns when there is none.
func (ls *LState) CheckInterrupt() {
	if err := ls.interruptError(); err != nil {
		ls.RaiseError("%s", err.Error())
	}
}

// tickError is Tick for code that must not raise (the parser and the
// compiler, which turn panics into errors): the error to raise, at most
// once every tickEvery steps.
func (ls *LState) tickError() error {
	ls.ticks--
	if ls.ticks >= 0 {
		return nil
	}
	ls.ticks = tickEvery
	return ls.interruptError()
}

// interruptError is the error CheckInterrupt raises, or nil.
func (ls *LState) interruptError() error {
	if in := ls.interrupt; in != nil {
		if in.Flag.Load()&^InterruptHook != 0 && in.Check != nil {
			if err := in.Check(ls); !isPreemption(err) {
				return err
			}
		}
		return nil
	}
	if ls.ctx == nil {
		return nil
	}
	select {
	case <-ls.ctx.Done():
		return ls.ctx.Err()
	default:
		return nil
	}
}
