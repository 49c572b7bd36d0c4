package lua

import "math"

// Debug hooks, as Lua 5.1 calls them (ldo.c's luaD_callhook, lvm.c's
// traceexec). (luarun's fork.)
//
// A hook costs nothing while none is set: the per-instruction check is
// the interrupt's (SetInterrupt), whose flag gets InterruptHook while a
// thread checking that interrupt has a hook; the check then calls
// hookInstruction for the line, count, call (of a Lua function) and
// return (of a Lua function) events. A Go function's call and return are
// sent by callGFunction, behind a nil check of the running thread's hook.

// Hook event masks (Hook.Mask), as Lua 5.1's LUA_MASK*.
const (
	HookCall = 1 << iota
	HookReturn
	HookLine
	HookCount
)

// HookEvent is what a hook is called for.
type HookEvent int

// Hook events, as Lua 5.1's LUA_HOOK*.
const (
	HookEventCall HookEvent = iota
	HookEventReturn
	HookEventLine
	HookEventCount
	HookEventTailReturn
)

var hookEventNames = [...]string{"call", "return", "line", "count", "tail return"}

// String is the event's name as Lua 5.1's debug library passes it to a
// hook.
func (e HookEvent) String() string { return hookEventNames[e] }

// InterruptHook is the bit of Interrupt.Flag that says a thread checking
// the interrupt has a hook (SetHook sets and clears it). Interrupt.Check
// is called only when another bit is set.
const InterruptHook uint32 = 1 << 31

// Hook is a debug hook: Func is called for the events of Mask (HookCall,
// HookReturn, HookLine; HookCount every Count instructions if Count > 0)
// with the thread running the function that triggered it (its current
// frame) and, for a line event, the line (else -1). Func is not called
// again while it runs on that thread (5.1's allowhook). Value is the
// caller's to keep (luaproc keeps the Lua function debug.gethook
// answers).
type Hook struct {
	Func  func(L *LState, ev HookEvent, line int)
	Mask  int
	Count int
	Value LValue
}

func (h *Hook) active() bool { return h != nil && h.Func != nil && h.Mask != 0 }

// SetHook sets ls's hook (nil removes it). A hook with no event in its
// mask is kept (GetHook answers it) but never called. A hook needs ls to
// check an interrupt: one is set on ls if it has none (it replaces the
// per-instruction check of ls's context while the hook is set).
func (ls *LState) SetHook(h *Hook) {
	if h != nil && h.Count > 0 {
		h.Mask |= HookCount
	}
	wasActive := ls.hook.active()
	ls.hook = h
	if h != nil || ls.ht != nil {
		ht := ls.hookThread()
		ht.frame = nil
		if h != nil {
			ht.counter = min(h.Count, math.MaxInt32)
		}
	}
	isActive := h.active()
	if wasActive == isActive {
		return
	}
	in := ls.interrupt
	if isActive {
		if in == nil {
			in = &Interrupt{}
			ls.SetInterrupt(in)
			ls.hookThread().interrupt = true
		}
		if in.hooks.Add(1) == 1 {
			in.Flag.Or(InterruptHook)
		}
		return
	}
	if in != nil && in.hooks.Add(-1) == 0 {
		in.Flag.And(^InterruptHook)
		if ls.ht != nil && ls.ht.interrupt {
			ls.ht.interrupt = false
			ls.SetInterrupt(nil)
		}
	}
}

// GetHook returns ls's hook, or nil.
func (ls *LState) GetHook() *Hook { return ls.hook }

// InHook reports whether ls is running its hook (or was resumed by a
// thread that was, InheritHook).
func (ls *LState) InHook() bool { return ls.ht != nil && ls.ht.running }

// InheritHook gives ls the hook of from, and from's running of it: for a
// thread that runs code on behalf of from (luaproc's pcall coroutines),
// whose hook is from's and that must not call it while from's runs.
func (ls *LState) InheritHook(from *LState) {
	if ls.hook != from.hook {
		ls.SetHook(from.hook)
	}
	if running := from.InHook(); running || ls.ht != nil {
		ls.hookThread().running = running
	}
}

// runHook calls h for ev with allowhook off.
func (ls *LState) runHook(h *Hook, ev HookEvent, line int) {
	ht := ls.hookThread()
	ht.running = true
	defer func() { ht.running = false }()
	h.Func(ls, ev, line)
}

// interrupted answers a set interrupt flag before instruction inst of
// frame cf (mainLoopWithInterrupt), and returns the instruction to run:
// Check's error is raised, or, a *Preemption, yields L there when it can
// (its loop is the thread's own, baseframe nil: preempt.go) and returns
// opPreempted's, which leaves the loop; a hook's events are sent. Out of
// line, so the loop's check stays one load and one branch.
//
//go:noinline
func interrupted(L *LState, in *Interrupt, cf *callFrame, inst uint32, baseframe *callFrame) uint32 {
	f := in.Flag.Load()
	if f&^InterruptHook != 0 && in.Check != nil {
		if err := in.Check(L); err != nil {
			pre, ok := err.(*Preemption)
			if !ok {
				L.RaiseError("%s", err.Error())
			}
			if baseframe == nil && L.canPreempt() {
				preempt(L, cf, pre)
				return uint32(opPreempted) << 26
			}
		}
	}
	if f&InterruptHook != 0 && L.hook != nil {
		hookInstruction(L, cf)
	}
	return inst
}

// hookLine is the line of instruction pc of proto, or -1.
func hookLine(proto *FunctionProto, pc int) int {
	if pc >= 0 && pc < len(proto.DbgSourcePositions) {
		return proto.DbgSourcePositions[pc]
	}
	return -1
}

// hookInstruction sends the events due before the instruction frame cf
// is about to run (cf.Pc has been advanced past it), in Lua 5.1's order:
// call (first instruction of a function), count, line, and return (the
// instruction is a RETURN; then one "tail return" per tail call the
// frame made). The line rule is traceexec's: a line event when the
// function starts, when the pc jumps backwards (or stays), or when it
// enters a new line. ht.frame and ht.pc remember the frame and pc
// of the previous check (5.1's savedpc); a frame returned into counts
// from its call instruction.
func hookInstruction(ls *LState, cf *callFrame) {
	h := ls.hook
	if !h.active() || ls.InHook() {
		return
	}
	ht := ls.hookThread()
	cur := cf.Pc
	npc := cur - 1
	proto := cf.Fn.Proto
	old := ht.pc
	if cf != ht.frame {
		old = cur - 1
		ht.frame, ht.pc = cf, cur
		if npc == 0 && h.Mask&HookCall != 0 {
			ls.runHook(h, HookEventCall, -1)
			if h = ls.hook; !h.active() {
				return
			}
		}
	}
	ht.frame, ht.pc = cf, cur
	if h.Mask&HookCount != 0 {
		ht.counter--
		if ht.counter <= 0 {
			ht.counter = min(h.Count, math.MaxInt32)
			ls.runHook(h, HookEventCount, -1)
			if h = ls.hook; !h.active() {
				return
			}
		}
	}
	if h.Mask&HookLine != 0 {
		line := hookLine(proto, npc)
		if npc == 0 || cur <= old || line != hookLine(proto, old-1) {
			ls.runHook(h, HookEventLine, line)
			if h = ls.hook; !h.active() {
				return
			}
		}
	}
	switch int(proto.Code[npc] >> 26) {
	case OP_TAILCALL:
		ht.frame = nil // the frame is reused for the function called
	case OP_RETURN:
		ht.frame = nil // the frame is popped, and may be reused
		if h.Mask&HookReturn != 0 {
			ls.runHook(h, HookEventReturn, -1)
			// one per lost call, each dropped before its event, as 5.1's
			// callrethooks does (the frame is returning: its count is not
			// read again)
			for cf.TailCall > 0 {
				if h = ls.hook; !h.active() || h.Mask&HookReturn == 0 {
					return
				}
				cf.TailCall--
				ls.runHook(h, HookEventTailReturn, -1)
			}
		}
	}
}

// hookGo sends a Go function's call or return event (callGFunction).
func hookGo(ls *LState, ev HookEvent) {
	h := ls.hook
	if !h.active() || ls.InHook() {
		return
	}
	if (ev == HookEventCall && h.Mask&HookCall != 0) || (ev == HookEventReturn && h.Mask&HookReturn != 0) {
		ls.runHook(h, ev, -1)
	}
}

// hookThread is a thread's state of its hook, made with its first hook:
// a state without one (nearly all) does not pay for it.
type hookThread struct {
	running   bool       // 5.1's allowhook, off
	interrupt bool       // SetHook made the thread's interrupt
	frame     *callFrame // the frame of the previous instruction checked
	pc        int        // and its pc
	counter   int        // instructions left to the next count event
}

// hookThread returns ls's hook state, made on first use.
func (ls *LState) hookThread() *hookThread {
	if ls.ht == nil {
		ls.ht = &hookThread{}
	}
	return ls.ht
}
