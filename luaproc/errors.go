package luaproc

import (
	"fmt"
	"strings"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/optcheck"
)

// ScriptError is a Lua error that ended a process. Error returns the
// message as Lua shows it ("file:line: message"); Traceback holds the Lua
// stack at the point of the error, when it was raised in the process's
// own coroutine.
type ScriptError struct {
	Message   string
	Traceback string
	// Value is the error value converted to a payload value when it is not
	// a string (error({code = 7})), else nil.
	Value any
	// ValueType is the Lua type of the error value ("string", "nil",
	// "table", ...), "" for a failure that no Lua error value made.
	ValueType string

	cause    error  // what stopped the Lua code, if not itself (Unwrap)
	entry    string // the process's entry point (crash reports)
	internal bool   // a Go panic: luarun's bug, reported with its stack (internal.go)
}

func (e *ScriptError) Error() string { return e.Message }

// LuaTraceback is the Lua stack where the error was raised, as
// debug.traceback writes it ("stack traceback:\n\t..."), or "" if none
// was recorded: the third value process.wait returns for a failed
// process, and the traceback field of a down or exit event.
func (e *ScriptError) LuaTraceback() string { return e.Traceback }

// ExitValue is the error value when it was not a string (what a down or
// exit event carries as the reason), else nil.
func (e *ScriptError) ExitValue() any { return e.Value }

// Unwrap returns what stopped the Lua code when it was not the code
// itself: the *StepLimitError of a step that ran too long (Options.MaxStep).
func (e *ScriptError) Unwrap() error { return e.cause }

// EntryError: the entry point a process was started with does not exist.
type EntryError struct {
	Script  string
	Entry   string
	Entries []string // the entry points that do exist, sorted
	// Misspelt: the script has no main (Entry) but this function, one
	// edit away, that it never calls (misspeltMain)
	Misspelt string

	// answered: a spawn request from another node was refused with it
	// (remotewait.go), so the process's end is no crash to report
	answered bool
}

func (e *EntryError) Error() string {
	if e.Misspelt != "" {
		return fmt.Sprintf("%s: no function %q, the entry point (did you mean '%s'? the script defines it and never calls it)", e.Script, e.Entry, e.Misspelt)
	}
	if len(e.Entries) == 0 {
		return fmt.Sprintf("%s: unknown entry %q (the script defines no entry points)", e.Script, e.Entry)
	}
	hint := ""
	if s := optcheck.Suggest(e.Entry, e.Entries); s != "" {
		hint = fmt.Sprintf("did you mean '%s'? ", s)
	}
	return fmt.Sprintf("%s: unknown entry %q (%sentries: %s)", e.Script, e.Entry, hint, strings.Join(e.Entries, ", "))
}

// KilledError ends a process that was killed (process.kill, Runtime.Kill,
// the end of its Start context). Cause is the context's cause when the
// context ended it (Unwrap returns it), else nil.
type KilledError struct {
	Reason string
	Cause  error
}

func (e *KilledError) Unwrap() error { return e.Cause }

func (e *KilledError) Error() string {
	if e.Reason == "" {
		return "killed"
	}
	return "killed: " + e.Reason
}

// traceback formats L's stack the way Lua 5.1's debug.traceback does, from
// the frame list (frames.go): the innermost call first, tail calls marked.
// The frames of luarun's built-in Lua functions (require, pcall...) show
// as one Go frame named as the script called it ("[C]: in function
// 'require'", as Lua 5.1 shows a C function), and the function the
// prelude's boot called is named entry. The stack starts at level 2, as
// lua.c's traceback of an uncaught error does (its level 0 and 1 are
// debug.traceback and lua.c's handler), which decides where a deep stack
// is cut (tracebackFrom).
func traceback(L *lua.LState, entry string) string {
	return tracebackFrom(nil, L, currentFrame(L), 2, 0, entry)
}

// The levels Lua 5.1's db_errorfb shows of a deep stack: those up to
// level tbLevels1, then "...", then the last tbLevels2.
const (
	tbLevels1 = 12
	tbLevels2 = 10
)

// tbLevel is one level of a traceback: a frame, the n "(tail call)"
// levels after a frame whose function replaced n calls by tail calls, or
// the "[C]: ?" of the host that called a main chunk (lua.c's, in Lua 5.1).
type tbLevel struct {
	f     *callFrame
	name  string
	where string // "file:line:", or "" for a Go function
	kind  byte   // 0 a frame, 't' tail calls, 'C' the host
	n     int    // how many tail calls ('t')
}

// count is how many levels l stands for.
func (l tbLevel) count() int {
	if l.kind == 't' {
		return l.n
	}
	return 1
}

func (l tbLevel) String() string {
	switch l.kind {
	case 't':
		return "(tail call): ?"
	case 'C':
		return "[C]: ?"
	}
	var b strings.Builder
	if l.where == "" {
		b.WriteString("[C]:")
	} else {
		b.WriteString(l.where)
	}
	switch {
	case l.name != "" && l.name != "?":
		fmt.Fprintf(&b, " in function '%s'", l.name)
	case l.where == "":
		b.WriteString(" ?")
	case l.f.Fn.Proto.LineDefined == 0:
		b.WriteString(" in main chunk")
	default:
		fmt.Fprintf(&b, " in function <%s:%d>", lua.ProtoPositionSource(l.f.Fn.Proto), l.f.Fn.Proto.LineDefined)
	}
	return b.String()
}

// tracebackFrom is traceback from frame f of th up, the stack's level
// start being f, or (tail > 0) the tail-th of the calls f's tail calls
// replaced (frameAt's answer for start); start decides where a deep stack
// is cut, as in Lua 5.1's db_errorfb: the levels below tbLevels1, "...",
// the last tbLevels2, when there are more than tbLevels2 + 1 past
// tbLevels1. With p, the walk goes on from a coroutine pcall runs its
// function in to the one that called pcall (debug.traceback), as
// frameAt's does.
func tracebackFrom(p *luaProcess, th *lua.LState, f *callFrame, start, tail int, entry string) string {
	return writeTraceback(tracebackLevels(p, th, f, entry), start, tail)
}

// writeTraceback writes levels, levels[skip] being level start, as
// tracebackFrom describes.
func writeTraceback(levels []tbLevel, start, tail int) string {
	end := start - tail // the level after the last
	for _, l := range levels {
		end += l.count()
	}
	cutFrom, cutTo := end, end // the levels "..." stands for
	if l := max(start, tbLevels1); l+tbLevels2+1 < end {
		cutFrom, cutTo = l, end-tbLevels2
	}
	var b strings.Builder
	b.WriteString("stack traceback:")
	level := start - tail // of levels[i]'s first
	for _, l := range levels {
		first, next := max(level, start), level+l.count()
		level = next
		for ; first < next; first++ {
			if first == cutFrom {
				b.WriteString("\n\t...")
			}
			if first >= cutFrom && first < cutTo {
				first = min(cutTo, next) - 1 // (a run of tail calls is skipped at once)
				continue
			}
			b.WriteString("\n\t")
			b.WriteString(l.String())
		}
	}
	return b.String()
}

// tracebackLevels lists the levels of the stack from frame f of th up, as
// tracebackFrom writes them: one per frame (a run of built-in frames as
// the one the script called), one per call a frame's tail calls replaced
// after it, the host's after a main chunk.
func tracebackLevels(p *luaProcess, th *lua.LState, f *callFrame, entry string) []tbLevel {
	// inPcall: the walk goes on from th's bottom to the thread that called
	// pcall (th runs a pcall's function)
	inPcall := func() bool { return p != nil && p.pthreads[th] && th.Parent != nil }
	up := func(f *callFrame) *callFrame {
		if f.Parent == nil && inPcall() {
			th = th.Parent
			return currentFrame(th)
		}
		return f.Parent
	}
	var boot *lua.FunctionProto // the prelude's boot, which calls the entry
	if q := procOf(th); q != nil && q.tpl != nil && q.tpl.boot != nil {
		boot = q.tpl.boot.Proto
	}
	var levels []tbLevel
	for ; f != nil; f = up(f) {
		name, tails, where := calledName(f), f.TailCall, ""
		if c := f.Parent; c != nil && !c.Fn.IsG && c.Fn.Proto == boot && (f.Fn.IsG || f.Fn.Proto.LineDefined != 0) {
			name = entry // (boot calls the script's main chunk too)
		}
		switch {
		case f.Fn.IsG:
			if outer := outermostBuiltin(f.Parent); outer != nil {
				name, tails = calledName(outer), outer.TailCall
				f = outer // the built-in's frames are this one
			}
		case isBuiltin(f.Fn.Proto.SourceName):
			f = outermostBuiltin(f)
			if f.Parent == nil {
				// boot, or a task's trampoline: the bottom. A main
				// chunk's caller is the host, as lua.c is in 5.1 (not a
				// loaded chunk pcall or xpcall called).
				if n := len(levels); n > 0 && !inPcall() && levels[n-1].kind == 0 && levels[n-1].where != "" && levels[n-1].f.Fn.Proto.LineDefined == 0 {
					levels = append(levels, tbLevel{kind: 'C'})
				}
				continue
			}
			name, tails = calledName(f), f.TailCall
		default:
			where = frameWhere(f)
		}
		levels = append(levels, tbLevel{f: f, name: name, where: where})
		if tails > 0 {
			levels = append(levels, tbLevel{kind: 't', n: int(tails)})
		}
	}
	return levels
}

// outermostBuiltin returns the last of the built-in Lua frames that start
// at f (the one the script called), or nil if f is not one.
func outermostBuiltin(f *callFrame) *callFrame {
	var last *callFrame
	for ; f != nil && !f.Fn.IsG && isBuiltin(f.Fn.Proto.SourceName); f = f.Parent {
		last = f
	}
	return last
}

// calledName is the name the caller of f used for it, if it called f by
// a CALL instruction that the compiler named.
func calledName(f *callFrame) string {
	if f.TailCall > 0 {
		return ""
	}
	return callName(f.Parent)
}

// callName is the name the compiler gave the function that the pending
// CALL instruction of frame caller calls, or "".
func callName(caller *callFrame) string {
	if caller == nil || opaqueFrame(caller) {
		return "" // a built-in's local names are not the script's
	}
	for _, c := range caller.Fn.Proto.DbgCalls {
		if c.Pc == caller.Pc-1 {
			return c.Name
		}
	}
	return ""
}

// errorMessage renders a Lua error value as text: a table's __tostring
// (called in p's spare coroutine: it must not block, and its own error is
// not the message), "nil error" for error(nil).
func (p *luaProcess) errorMessage(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case nil, *lua.LNilType:
		return "nil error"
	case *lua.LTable:
		if mt, ok := x.Metatable.(*lua.LTable); ok {
			if ts, ok := mt.RawGetString("__tostring").(*lua.LFunction); ok {
				if s, ok := p.callAside(ts, x); ok {
					return s
				}
				return "(error object with a failing __tostring)"
			}
		}
		return "(error object is a table value)"
	default:
		return v.String()
	}
}

// callAside calls f(arg) in a spare coroutine of the process, outside any
// task, and returns its result as a string.
func (p *luaProcess) callAside(f *lua.LFunction, arg lua.LValue) (s string, ok bool) {
	co := p.takeThread()
	defer p.dropThread(co)
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if err := co.CallByParam(lua.P{Fn: f, NRet: 1, Protect: true}, arg); err != nil {
		return "", false
	}
	s = lua.LVAsString(co.Get(-1))
	return s, true
}

// unwhere removes the position of a built-in frame from an error message:
// a Go function that raises while a built-in Lua function calls it (as
// the body of a pcall, a coroutine or a process.all function, or as
// require's helper) gets that frame's line as its "where", which names
// nothing in the script.
func unwhere(v lua.LValue) lua.LValue {
	s, ok := v.(lua.LString)
	if !ok || !isBuiltin(string(s)) {
		return v
	}
	name, rest, ok := strings.Cut(string(s[len(builtinPrefix):]), ":")
	if !ok || strings.ContainsAny(name, " \n") {
		return v
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if digits == 0 || !strings.HasPrefix(rest[digits:], ": ") {
		return v
	}
	return lua.LString(rest[digits+2:])
}

// scriptWhere is "file:line:" of the innermost frame of the script's own
// code (not a Go function, not a built-in) in th or the coroutines that
// resumed it, or "".
func scriptWhere(th *lua.LState) string {
	for ; th != nil; th = th.Parent {
		for f := currentFrame(th); f != nil; f = f.Parent {
			if !opaqueFrame(f) {
				return frameWhere(f)
			}
		}
	}
	return ""
}

// raiseAt raises msg prefixed with scriptWhere: the position of the
// script's code that led to this call.
func raiseAt(L *lua.LState, msg string) {
	if where := scriptWhere(L); where != "" {
		msg = where + " " + msg
	}
	L.Error(lua.LString(msg), 0)
}

// luaError is the base library's error(v [, level]) with Lua 5.1's rule
// for the position it adds (gopher-lua's counts one level short past
// level 1): level 1 is the function that called error, level 2 its
// caller, and so on; a level that lands on a Go function — or on
// luarun's built-in Lua code, which stands in for Lua 5.1's C functions
// (pcall, require) — adds no position, as a C function does in Lua 5.1.
// Like Lua 5.1, a number message gets the position too.
func luaError(L *lua.LState) int {
	v := L.Get(1) // error() raises nil, as in Lua 5.1
	level := L.OptInt(2, 1)
	switch v.(type) {
	case lua.LString, lua.LNumber:
		if level > 0 {
			v = lua.LString(levelWhere(L, level) + lua.LVAsString(v))
		}
	}
	L.Error(v, 0)
	return 0
}

// levelWhere is "file:line: " of the function level calls up from the
// running Go function (level 0), or "" when there is none or it is
// opaque (frameAt).
func levelWhere(L *lua.LState, level int) string {
	_, f, tail := frameAt(L, level)
	if f == nil || tail > 0 || opaqueFrame(f) || frameLine(f) == 0 {
		return ""
	}
	return frameWhere(f) + " "
}

// opaqueFrame: a Go function's frame or built-in Lua code's, which
// scripts see as Go functions.
func opaqueFrame(f *callFrame) bool { return f.Fn.IsG || isBuiltin(f.Fn.Proto.SourceName) }

// frameAt finds the frame level calls up from the function running in L
// (level 0), as Lua 5.1 counts levels: a run of opaque frames (Go
// functions, built-in code) counts as one level, and the walk goes on
// from the coroutine pcall runs its function in to the one that called
// pcall, as the frames are one stack in Lua 5.1; it stops at the base of
// any other coroutine. The calls a frame's function replaced by tail
// calls (its TailCall) are as many levels right above it, as 5.1's lost
// tail calls: when level is one of them, tail is its place among them
// (1 the nearest) and f the frame that replaced them. It returns the
// coroutine, the frame (nil when there is none) and tail (0 for the
// frame itself).
func frameAt(L *lua.LState, level int) (th *lua.LState, f *callFrame, tail int) {
	p := procOf(L)
	parent := func(th *lua.LState, f *callFrame) (*lua.LState, *callFrame) {
		if f.Parent != nil || p == nil || !p.pthreads[th] || th.Parent == nil {
			return th, f.Parent
		}
		return th.Parent, currentFrame(th.Parent)
	}
	th, f = L, currentFrame(L)
	for ; f != nil && level > 0; level-- {
		if level <= int(f.TailCall) {
			return th, f, level
		}
		level -= int(f.TailCall)
		below := f
		th, f = parent(th, f)
		for f != nil && opaqueFrame(f) {
			nth, next := parent(th, f)
			if next == nil {
				if !p.calledByBoot(below) {
					f = nil // a coroutine's base: 5.1 has none
				}
				break
			}
			if !opaqueFrame(next) {
				break
			}
			th, f = nth, next
		}
	}
	return th, f, 0
}

// calledByBoot says whether the prelude's boot called f (the script's
// main chunk or its entry point): boot stands for the host, a level as
// lua.c's C function is in 5.1; a coroutine's base is none.
func (p *luaProcess) calledByBoot(f *callFrame) bool {
	return p != nil && p.tpl != nil && p.tpl.boot != nil && f.Parent != nil &&
		!f.Parent.Fn.IsG && f.Parent.Fn.Proto == p.tpl.boot.Proto
}

// luaTypeName is v's Lua type name; a Go nil is nil.
func luaTypeName(v lua.LValue) string {
	if v == nil {
		return "nil"
	}
	return v.Type().String()
}
