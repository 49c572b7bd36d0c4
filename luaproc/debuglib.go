package luaproc

// The debug library, as far as programs use it and no further: traceback,
// getinfo, getlocal, getupvalue and setupvalue of the script's own Lua
// functions, getfenv and setfenv under the base functions' rules. Levels
// count as Lua 5.1's do (frameAt): luarun's built-in code shows as Go
// functions, and pcall's coroutine is part of its caller's stack.
//
// Every function of Lua 5.1's debug library is there; what would reach
// what processes share is not: no locals or upvalues of built-in
// functions (their upvalues are shared by every process), getmetatable
// answers a luarun metatable (a module proxy's, _G's, json.null's: shared
// and locked) as the base getmetatable does, setmetatable refuses to
// replace one, and getregistry is a table of the process's own (the
// state's registry holds luarun's bookkeeping). The metatables of nil,
// booleans, numbers, strings, functions and threads belong to the
// process's own state (reset when a state is recycled): the first
// debug.getmetatable("") gives the process a string metatable of its own
// (__index its string table), which it may change as Lua 5.1 allows.
// sethook's hooks are called as Lua 5.1 calls them (debugSethook).

import (
	lua "github.com/luarun/luarun/lua"
)

var debugFuncs = map[string]lua.LGFunction{
	"traceback":    debugTraceback,
	"getinfo":      debugGetinfo,
	"getlocal":     debugGetlocal,
	"getupvalue":   debugGetupvalue,
	"setupvalue":   debugSetupvalue,
	"setmetatable": debugSetmetatable,
	"getmetatable": debugGetmetatable,
	"setlocal":     debugSetlocal,
	"getregistry":  debugGetregistry,
	"sethook":      debugSethook,
	"gethook":      debugGethook,
	"debug":        debugDebug,
}

// debugSetmetatable is debug.setmetatable(value, table or nil): it
// returns true, as 5.1's does, and ignores __metatable, as 5.1's does. A
// type's metatable is set on the calling process's own state. One of
// luarun's metatables is not replaced: the value it belongs to may be
// shared by processes (json.null), or be one of the process's tables
// that luarun runs through it (_G, a module).
func debugSetmetatable(L *lua.LState) int {
	v := L.CheckAny(1)
	mt := L.Get(2)
	if mt != lua.LNil {
		if _, ok := mt.(*lua.LTable); !ok {
			L.ArgError(2, "nil or table expected")
		}
	}
	var old lua.LValue = lua.LNil
	switch v := v.(type) {
	case *lua.LTable:
		old = v.Metatable
	case *lua.LUserData:
		old = v.Metatable
	}
	if old, ok := old.(*lua.LTable); ok && procOf(L).tpl.isLuarunMT(old) {
		L.RaiseError("debug.setmetatable: cannot replace a metatable of luarun's (%s)", lua.LVAsString(old.RawGetString("__metatable")))
	}
	L.SetMetatable(v, mt)
	L.Push(lua.LTrue)
	return 1
}

// debugGetmetatable is debug.getmetatable(value): value's metatable,
// __metatable ignored (Lua 5.1's), or nil. A type metatable that is
// shared (strings') is answered as this state's view of it (lua/cow.go),
// so a script may change its own strings' metatable; another of luarun's
// metatables, which processes share (a file handle's, json.null's,
// package's), is answered as the base getmetatable answers it (its
// __metatable).
func debugGetmetatable(L *lua.LState) int {
	v := L.CheckAny(1)
	mt, ok := L.GetRawMetatable(v).(*lua.LTable)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	if procOf(L).tpl.isLuarunMT(mt) {
		L.Push(mt.RawGetString("__metatable"))
		return 1
	}
	L.Push(mt)
	return 1
}

// debugRegistryKey holds, in the state's registry, the table
// debug.getregistry answers (pool.go clears it).
const debugRegistryKey = "luarun.debug-registry"

// debugGetregistry is debug.getregistry(): a table of the process's own,
// the same one on every call (Lua libraries keep their data there).
func debugGetregistry(L *lua.LState) int {
	reg := L.G.Registry()
	t, ok := reg.RawGetString(debugRegistryKey).(*lua.LTable)
	if !ok {
		t = L.CreateTable(0, 0)
		reg.RawSetString(debugRegistryKey, t)
	}
	L.Push(t)
	return 1
}

// debugSethook is debug.sethook([thread,] [hook, mask [, count]]): hook
// is called as Lua 5.1 calls it (lua/hook.go), with the event ("call",
// "return", "tail return", "line", "count") and, for "line", the line.
// A hook is a coroutine's: thread's, or the running coroutine's, as the
// script sees it (coroutine.running: the task's for the process's own
// code). The coroutines pcall and xpcall run their function in share the
// hook of the coroutine that called them: sethook sets it on each of them
// from the running one down to that coroutine (hookChain), and pstart and
// presume hand it to the coroutine they resume (lua.InheritHook). luarun's
// built-in code is hidden from hooks as from getinfo (hookHidden).
func debugSethook(L *lua.LState) int {
	th, n := threadArg(L)
	var h *lua.Hook
	if fn := L.Get(n); fn != lua.LNil {
		L.CheckFunction(n)
		mask, count := L.CheckString(n+1), L.OptInt(n+2, 0)
		h = &lua.Hook{Func: luaHook(fn), Count: count, Value: fn}
		for _, c := range mask {
			switch c {
			case 'c':
				h.Mask |= lua.HookCall
			case 'r':
				h.Mask |= lua.HookReturn
			case 'l':
				h.Mask |= lua.HookLine
			}
		}
	}
	if th != L {
		th.SetHook(h)
		return 0
	}
	for _, t := range hookChain(L) {
		t.SetHook(h)
	}
	return 0
}

// hookChain is the running coroutine L and, when L is one pcall or
// xpcall made, the coroutines that called it, up to the script's (or
// task's) coroutine: they share one hook.
func hookChain(L *lua.LState) []*lua.LState {
	p := procOf(L)
	chain := []*lua.LState{L}
	for th := L; p != nil && p.pthreads[th] && th.Parent != nil; th = th.Parent {
		chain = append(chain, th.Parent)
	}
	return chain
}

// luaHook is the Go side of the Lua hook fn: it calls fn(event, line)
// unless the event is luarun's own code's (hookHidden).
func luaHook(fn lua.LValue) func(*lua.LState, lua.HookEvent, int) {
	return func(L *lua.LState, ev lua.HookEvent, line int) {
		if hookHidden(L, ev) {
			return
		}
		L.Push(fn)
		L.Push(lua.LString(ev.String()))
		if line >= 0 {
			L.Push(lua.LNumber(line))
		} else {
			L.Push(lua.LNil)
		}
		L.Call(2, 0)
	}
}

// hookHidden says whether an event of the function running in L is
// luarun's built-in code's, which scripts see as Go functions (frameAt):
// such a run of frames gets one call and one return event, those of its
// outermost frame, and no line, count or tail return events.
func hookHidden(L *lua.LState, ev lua.HookEvent) bool {
	f := currentFrame(L)
	if f == nil {
		return true
	}
	if !opaqueFrame(f) {
		return false
	}
	if ev != lua.HookEventCall && ev != lua.HookEventReturn {
		return true
	}
	caller := f.Parent
	if caller == nil {
		if p := procOf(L); p != nil && p.pthreads[L] && L.Parent != nil {
			caller = currentFrame(L.Parent)
		}
	}
	return caller != nil && opaqueFrame(caller)
}

// debugGethook is debug.gethook([thread]): the hook, its mask ("c", "r",
// "l" in that order) and count, as Lua 5.1 answers them (nil, "", 0
// without one).
func debugGethook(L *lua.LState) int {
	th, _ := threadArg(L)
	h := th.GetHook()
	if h == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(""))
		L.Push(lua.LNumber(0))
		return 3
	}
	mask := ""
	if h.Mask&lua.HookCall != 0 {
		mask += "c"
	}
	if h.Mask&lua.HookReturn != 0 {
		mask += "r"
	}
	if h.Mask&lua.HookLine != 0 {
		mask += "l"
	}
	L.Push(h.Value)
	L.Push(lua.LString(mask))
	L.Push(lua.LNumber(h.Count))
	return 3
}

// debugDebug is debug.debug(): luarun has no interactive console.
func debugDebug(L *lua.LState) int {
	L.RaiseError("debug.debug: luarun has no interactive console")
	return 0
}

// debugSetlocal is debug.setlocal([thread,] level, n, value): the name
// of local n of the script function at level, set to value, or nothing.
func debugSetlocal(L *lua.LState) int {
	th, n := threadArg(L)
	level, local := L.CheckInt(n), L.CheckInt(n+1)
	v := L.CheckAny(n + 2)
	t, f, tail, top := levelOf(L, th, level)
	if f == nil && top == nil {
		L.ArgError(n, "level out of range")
	}
	if top != nil || tail > 0 || hiddenLocals(f, level) {
		// a lost tail call has no locals, nor a dropped Go function:
		// nil, as 5.1 past a C function's slots
		L.Push(lua.LNil)
		return 1
	}
	name := t.SetLocalAt(int(f.Idx), local, v)
	if name == "" {
		L.Push(lua.LNil) // as 5.1: nil, not nothing
		return 1
	}
	L.Push(lua.LString(name))
	return 1
}

// threadArg reads an optional first thread argument: the thread and the
// index of the next argument.
func threadArg(L *lua.LState) (*lua.LState, int) {
	if th, ok := L.Get(1).(*lua.LState); ok {
		return th, 2
	}
	return L, 1
}

// debugTraceback is debug.traceback([thread,] [message [, level]]).
func debugTraceback(L *lua.LState) int {
	th, n := threadArg(L)
	msg := L.Get(n)
	if msg != lua.LNil || L.GetTop() >= n {
		if _, isString := msg.(lua.LString); !isString {
			if _, isNumber := msg.(lua.LNumber); !isNumber {
				L.Push(msg) // not a message: returned as it is, as in 5.1
				return 1
			}
		}
	}
	level := 1
	if th != L {
		level = 0
	}
	level = L.OptInt(n+1, level)
	p := procOf(L)
	var tb string
	if t, f, tail, top := levelOf(L, th, level); top != nil {
		levels := append([]tbLevel{{name: callName(top)}}, tracebackLevels(p, t, top, p.entryName())...)
		tb = writeTraceback(levels, 0, 0)
	} else if f != nil {
		tb = tracebackFrom(p, t, f, level, tail, p.entryName())
	} else {
		tb = "stack traceback:"
	}
	if msg != lua.LNil {
		tb = lua.LVAsString(msg) + "\n" + tb
	}
	L.Push(lua.LString(tb))
	return 1
}

// debugGetinfo is debug.getinfo([thread,] f [, what]): f a level or a
// function; nil past the last level.
func debugGetinfo(L *lua.LState) int {
	th, n := threadArg(L)
	what := L.OptString(n+1, "flnSu")
	var fn *lua.LFunction
	var frame *callFrame
	switch v := L.Get(n).(type) {
	case *lua.LFunction:
		fn = v
	case lua.LNumber:
		_, f, tail, top := levelOf(L, th, int(v))
		if top != nil {
			L.Push(droppedInfo(L, top, what, n+1))
			return 1
		}
		if f == nil {
			L.Push(lua.LNil)
			return 1
		}
		if tail > 0 {
			L.Push(tailCallInfo(L, what, n+1))
			return 1
		}
		frame, fn = f, f.Fn
	default:
		L.ArgError(n, "function or level expected")
	}
	t := L.CreateTable(0, 8)
	opaque := fn.IsG || isBuiltin(fn.Proto.SourceName)
	for _, c := range what {
		switch c {
		case 'S':
			if opaque {
				t.RawSetString("source", lua.LString("=[C]"))
				t.RawSetString("short_src", lua.LString("[C]"))
				t.RawSetString("what", lua.LString("C"))
				t.RawSetString("linedefined", lua.LNumber(-1))
				t.RawSetString("lastlinedefined", lua.LNumber(-1))
				continue
			}
			source := fn.Proto.SourceName
			if fn.Proto.FileChunk {
				source = "@" + source
			}
			t.RawSetString("source", lua.LString(source))
			t.RawSetString("short_src", lua.LString(lua.ShortSource(source)))
			kind := "Lua"
			if fn.Proto.LineDefined == 0 {
				kind = "main"
			}
			t.RawSetString("what", lua.LString(kind))
			t.RawSetString("linedefined", lua.LNumber(fn.Proto.LineDefined))
			last := fn.Proto.LastLineDefined
			if fn.Proto.LineDefined == 0 {
				last = 0 // a main chunk's, as in 5.1
			}
			t.RawSetString("lastlinedefined", lua.LNumber(last))
		case 'l':
			line := -1
			if frame != nil && !opaque && frameLine(frame) > 0 {
				line = frameLine(frame)
			}
			t.RawSetString("currentline", lua.LNumber(line))
		case 'u':
			ups := 0
			if !opaque {
				ups = int(fn.Proto.NumUpvalues)
			}
			t.RawSetString("nups", lua.LNumber(ups))
		case 'n':
			if frame != nil {
				if name := calledName(frame); name != "" && name != "?" {
					t.RawSetString("name", lua.LString(name))
					t.RawSetString("namewhat", lua.LString(nameWhat(frame)))
					continue
				}
			}
			t.RawSetString("namewhat", lua.LString(""))
		case 'f':
			// a Go function is given as 5.1 gives a C function; luarun's
			// own Lua functions (whose environment is shared) are not
			if !opaque || frame == nil || fn.IsG {
				t.RawSetString("func", fn)
			}
		case 'L': // the lines that have code, as 5.1's collectvalidlines
			if !opaque {
				lines := L.CreateTable(0, 0)
				for _, line := range fn.Proto.DbgSourcePositions {
					lines.RawSetInt(line, lua.LTrue)
				}
				t.RawSetString("activelines", lines)
			}
		default:
			L.ArgError(n+1, "invalid option")
		}
	}
	L.Push(t)
	return 1
}

// levelOf is frameAt for the debug functions, which may name another
// coroutine than the running L: one suspended in a Go function (a
// yield) has that function as level 0 in Lua 5.1, and the interpreter
// dropped its frame (droppedCall). Level 0 of such a
// coroutine is answered as top, the frame that called the function (f
// nil); the levels past it are frameAt's one lower.
func levelOf(L, th *lua.LState, level int) (t *lua.LState, f *callFrame, tail int, top *callFrame) {
	if caller := droppedCall(L, th); caller != nil {
		if level == 0 {
			return th, nil, 0, caller
		}
		level--
	}
	t, f, tail = frameAt(th, level)
	return t, f, tail, nil
}

// droppedCall is, for a coroutine th that is not L, suspended, whose
// top frame is a script's waiting on a call (the yield it is suspended
// in), that frame; else nil. (One an error ended keeps the frame that
// raised.)
func droppedCall(L, th *lua.LState) *callFrame {
	if th == L || th.Dead {
		return nil
	}
	f := currentFrame(th)
	if f == nil || opaqueFrame(f) {
		return nil
	}
	if inst, ok := pendingInstruction(f); !ok || (opcode(inst) != lua.OP_CALL && opcode(inst) != lua.OP_TAILCALL) {
		return nil
	}
	return f
}

// droppedInfo is debug.getinfo's table of the Go function a coroutine is
// suspended in (levelOf), called by frame caller: a C function's, as
// 5.1's, named by the call; its function is not known ('f' gives none).
func droppedInfo(L *lua.LState, caller *callFrame, what string, n int) *lua.LTable {
	return levelInfo(L, what, n, "=[C]", "C", func(t *lua.LTable) {
		if name := callName(caller); name != "" && name != "?" {
			t.RawSetString("name", lua.LString(name))
			t.RawSetString("namewhat", lua.LString(callNameWhat(caller)))
		} else {
			t.RawSetString("namewhat", lua.LString(""))
		}
	})
}

// tailCallInfo is debug.getinfo's table of a call lost to a tail call,
// the fields what asks for (argument n) as Lua 5.1's info_tailcall fills
// them: no function, no lines.
func tailCallInfo(L *lua.LState, what string, n int) *lua.LTable {
	return levelInfo(L, what, n, "=(tail call)", "tail", func(t *lua.LTable) {
		t.RawSetString("name", lua.LString(""))
		t.RawSetString("namewhat", lua.LString(""))
	})
}

// levelInfo is debug.getinfo's table of a level that has no Lua function
// to read (a Go function, a lost tail call): source (short_src is it
// without its '='), kind as what, no lines, no upvalues, names as
// setNames sets them; 'f' and 'L' give nothing.
func levelInfo(L *lua.LState, what string, n int, source, kind string, setNames func(*lua.LTable)) *lua.LTable {
	t := L.CreateTable(0, 8)
	for _, c := range what {
		switch c {
		case 'S':
			t.RawSetString("source", lua.LString(source))
			t.RawSetString("short_src", lua.LString(source[1:]))
			t.RawSetString("what", lua.LString(kind))
			t.RawSetString("linedefined", lua.LNumber(-1))
			t.RawSetString("lastlinedefined", lua.LNumber(-1))
		case 'l':
			t.RawSetString("currentline", lua.LNumber(-1))
		case 'u':
			t.RawSetString("nups", lua.LNumber(0))
		case 'n':
			setNames(t)
		case 'f', 'L':
		default:
			L.ArgError(n, "invalid option")
		}
	}
	return t
}

// debugGetlocal is debug.getlocal([thread,] level, n): the name and value
// of local n of the script function at level, or nothing.
func debugGetlocal(L *lua.LState) int {
	th, n := threadArg(L)
	level, local := L.CheckInt(n), L.CheckInt(n+1)
	t, f, tail, top := levelOf(L, th, level)
	if f == nil && top == nil {
		L.ArgError(n, "level out of range")
	}
	if top != nil || tail > 0 { // a lost tail call has no locals: nil, as 5.1's
		L.Push(lua.LNil)
		return 1
	}
	if hiddenLocals(f, level) {
		L.Push(lua.LNil) // as 5.1 past a C function's slots
		return 1
	}
	name, v := t.GetLocalAt(int(f.Idx), local)
	if name == "" {
		L.Push(lua.LNil) // as 5.1: nil, not nothing
		return 1
	}
	L.Push(lua.LString(name))
	L.Push(v)
	return 2
}

// hiddenLocals reports whether the frame at level keeps its slots from
// getlocal and setlocal: luarun's own code does, except level 0, the
// debug function itself, whose slots are its arguments ("(*temporary)"
// in Lua 5.1); another Go function's slots may hold what it works with.
func hiddenLocals(f *callFrame, level int) bool {
	return opaqueFrame(f) && !(level == 0 && f.Fn.IsG)
}

// scriptFunction reads argument n as a Lua function of the script's own
// (not a Go or built-in one, whose upvalues are not the script's).
func scriptFunction(L *lua.LState, n int) (*lua.LFunction, bool) {
	fn := L.CheckFunction(n)
	return fn, !fn.IsG && !isBuiltin(fn.Proto.SourceName)
}

// debugGetupvalue is debug.getupvalue(f, n).
func debugGetupvalue(L *lua.LState) int {
	fn, ok := scriptFunction(L, 1)
	up := L.CheckInt(2)
	if !ok || up < 1 || up > len(fn.Upvalues) {
		return 0
	}
	name, v := L.GetUpvalue(fn, up)
	L.Push(lua.LString(name))
	L.Push(v)
	return 2
}

// debugSetupvalue is debug.setupvalue(f, n, value): the upvalue's name,
// or nothing.
func debugSetupvalue(L *lua.LState) int {
	fn, ok := scriptFunction(L, 1)
	up := L.CheckInt(2)
	v := L.CheckAny(3)
	if !ok || up < 1 || up > len(fn.Upvalues) {
		return 0
	}
	L.Push(lua.LString(L.SetUpvalue(fn, up, v)))
	return 1
}

// handlerFrames is how many call frames past the coroutine's maximum an
// xpcall handler may use.
const handlerFrames = 200

// xpcallResult is what an xpcall handler returned (or that it failed)
// for the error that ended coroutine co.
type xpcallResult struct {
	co     *lua.LState
	failed bool
	value  lua.LValue
}

// armHandler(handler) is called first in the coroutine of xpcall
// (prelude.lua's handled_trampoline): an error raised in it calls the
// handler there, before the stack unwinds, as Lua 5.1 does; takeHandled
// then gives xpcall the handler's result. Resume set the coroutine's
// Panic when it started; the next start sets it again. An error the
// coroutine catches itself (a Go function's PCall) never reaches Panic.
//
// The handler runs as a call from Go, which cannot block (a 5.1 handler
// cannot yield). luarun lets a handler block, though: one that tries is
// stopped there and runs again, from its start, once the stack has
// unwound (xpcall's fallback, as for an error not raised in the
// coroutine's code).
//
// The handler runs with handlerFrames more call frames than the
// coroutine's maximum, so that it can run where a stack overflow was
// raised (Lua 5.1 grows its call-info array past LUAI_MAXCALLS for it);
// a handler that overflows those too fails: "error in error handling".
func (p *luaProcess) armHandler(L *lua.LState) int {
	handler := L.Get(1)
	co, old := L, L.Panic
	// The handler's fields, which the closure below uses too, are in
	// procMore.
	p.more()
	if p.xpHandled.co == co { // left by an error something caught in Go
		p.xpHandled = xpcallResult{}
	}
	L.Panic = func(th *lua.LState) {
		errv := unwhere(th.Get(-1))
		top := co.GetTop()
		co.Push(handler)
		co.Push(errv)
		res := xpcallResult{co: co}
		outerBlocked := p.xpBlocked
		p.xpBlocked = false
		p.xpRunning++
		restore := co.ExtendCallStack(handlerFrames) // a stack overflow's handler
		err := co.PCall(1, 1, nil)
		restore()
		if err != nil {
			res.failed = true
		} else {
			res.value = co.Get(-1)
		}
		p.xpRunning--
		blocked := p.xpBlocked
		p.xpBlocked = outerBlocked || blocked
		co.SetTop(top)
		if !blocked {
			p.xpHandled = res
		}
		old(th)
	}
	return 0
}

// takeHandled(co) answers whether the handler ran for co's error, then
// whether it returned, and its result.
func (p *luaProcess) takeHandled(L *lua.LState) int {
	co := L.CheckThread(1)
	if p.procMore == nil || p.xpHandled.co != co {
		L.Push(lua.LFalse)
		return 1
	}
	res := p.xpHandled
	p.xpHandled = xpcallResult{}
	L.Push(lua.LTrue)
	L.Push(lua.LBool(!res.failed))
	if res.value == nil {
		res.value = lua.LNil
	}
	L.Push(res.value)
	return 3
}

// debugFenv makes debug.getfenv and debug.setfenv from the base getfenv
// and setfenv (with their guards of what processes share): a coroutine's
// environment too, which the base functions do not reach. The coroutines
// a script can name are its own (coroutine.running never answers the
// process's tasks or pcall's coroutines).
func debugFenv(getfenv, setfenv *lua.LFunction) (get, set lua.LGFunction) {
	get = func(L *lua.LState) int {
		if th, ok := L.Get(1).(*lua.LState); ok {
			L.Push(th.Env)
			return 1
		}
		L.Push(getfenv)
		L.Push(L.Get(1))
		L.Call(1, 1)
		return 1
	}
	set = func(L *lua.LState) int {
		if th, ok := L.Get(1).(*lua.LState); ok {
			th.Env = L.CheckTable(2)
			L.Push(th)
			return 1
		}
		L.Push(setfenv)
		L.Push(L.Get(1))
		L.Push(L.Get(2))
		L.Call(2, 1)
		return 1
	}
	return get, set
}

// nameWhat is getinfo's namewhat for the function running in frame f
// (whose calledName is known): how the caller got the function it
// called, read from the instruction that last wrote the called register
// before the call ("global" when that cannot be told).
func nameWhat(f *callFrame) string { return callNameWhat(f.Parent) }

// callNameWhat is getinfo's namewhat for the function the pending call of
// frame caller calls (nameWhat).
func callNameWhat(caller *callFrame) string {
	code := caller.Fn.Proto.Code
	pc := caller.Pc - 1
	if pc < 0 || pc >= len(code) {
		return "global"
	}
	reg := int(code[pc]>>18) & 0xff
	if _, ok := caller.Fn.LocalName(reg+1, pc); ok {
		return "local"
	}
	for i := pc - 1; i >= 0 && i >= pc-64; i-- {
		if int(code[i]>>18)&0xff != reg {
			continue
		}
		switch opcode(code[i]) {
		case lua.OP_MOVE, lua.OP_MOVEN: // (a MOVEN is the first of a run of MOVEs)
			return "local"
		case lua.OP_GETGLOBAL:
			return "global"
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
			return "field"
		case lua.OP_SELF:
			return "method"
		case lua.OP_GETUPVAL:
			return "upvalue"
		}
		break
	}
	return "global"
}
