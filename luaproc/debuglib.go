package luaproc

// The debug library, as far as programs use it and no further: traceback,
// getinfo, getlocal, getupvalue and setupvalue of the script's own Lua
// functions, getfenv and setfenv under the base functions' rules. Levels
// count as Lua 5.1's do (frameAt): luarun's built-in code shows as Go
// functions, and pcall's coroutine is part of its caller's stack.
//
// What would reach what processes share is left out: no getregistry,
// getmetatable (it would hand out the shared, locked metatables of strings,
// globals and module proxies), sethook, and no locals or upvalues of
// built-in functions (their upvalues are shared by every process).
// setmetatable is there: the metatables of nil, booleans, numbers,
// strings, functions and threads belong to the process's own state (reset
// when a state is recycled), and a table's or userdata's protected
// metatable stays protected, as with the base setmetatable.

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
}

// debugSetmetatable is debug.setmetatable(value, table or nil): it
// returns true, as 5.1's does. A type's metatable is set on the calling
// process's own state; a table or userdata whose metatable is protected
// (by __metatable) keeps it, since such values may be shared by processes
// (json.null is one).
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
	if old, ok := old.(*lua.LTable); ok && old.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	L.SetMetatable(v, mt)
	L.Push(lua.LTrue)
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
	if msg != lua.LNil {
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
	if t, f := frameAt(th, level); f != nil {
		tb = tracebackFrom(p, t, f, p.entryName())
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
		_, frame = frameAt(th, int(v))
		if frame == nil {
			L.Push(lua.LNil)
			return 1
		}
		fn = frame.Fn
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
			src := fn.Proto.SourceName
			source := src
			if isScriptSource(src) {
				source = "@" + src
			}
			t.RawSetString("source", lua.LString(source))
			t.RawSetString("short_src", lua.LString(src))
			kind := "Lua"
			if fn.Proto.LineDefined == 0 {
				kind = "main"
			}
			t.RawSetString("what", lua.LString(kind))
			t.RawSetString("linedefined", lua.LNumber(fn.Proto.LineDefined))
			t.RawSetString("lastlinedefined", lua.LNumber(fn.Proto.LastLineDefined))
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
					t.RawSetString("namewhat", lua.LString("global"))
					continue
				}
			}
			t.RawSetString("namewhat", lua.LString(""))
		case 'f':
			if !opaque || frame == nil {
				t.RawSetString("func", fn)
			}
		case 'L': // activelines: not kept
		default:
			L.ArgError(n+1, "invalid option")
		}
	}
	L.Push(t)
	return 1
}

// debugGetlocal is debug.getlocal([thread,] level, n): the name and value
// of local n of the script function at level, or nothing.
func debugGetlocal(L *lua.LState) int {
	th, n := threadArg(L)
	level, local := L.CheckInt(n), L.CheckInt(n+1)
	t, f := frameAt(th, level)
	if f == nil {
		L.ArgError(n, "level out of range")
	}
	if opaqueFrame(f) {
		return 0
	}
	name, v := t.GetLocalAt(f.Idx, local)
	if name == "" {
		return 0
	}
	L.Push(lua.LString(name))
	L.Push(v)
	return 2
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

// armTrace is called first in the coroutine of xpcall(f, debug.traceback)
// (prelude.lua's traced trampoline): an error raised in it records its
// traceback before the stack unwinds (tracedFailure reads it). Resume set
// the coroutine's Panic when it started; the next start sets it again.
func (p *luaProcess) armTrace(L *lua.LState) int {
	old := L.Panic
	L.Panic = func(th *lua.LState) {
		p.errTrace = tracebackFrom(p, th, currentFrame(th), p.entryName())
		old(th)
	}
	return 0
}

// tracedFailure is the handler of xpcall(f, debug.traceback): the message
// and the traceback taken where the error was raised.
func (p *luaProcess) tracedFailure(L *lua.LState) int {
	msg := L.Get(1)
	tb := p.errTrace
	p.errTrace = ""
	switch msg.(type) {
	case lua.LString, lua.LNumber:
		L.Push(lua.LString(lua.LVAsString(msg) + "\n" + tb))
	default:
		L.Push(msg)
	}
	return 1
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
