package luaproc

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
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
}

func (e *ScriptError) Error() string { return e.Message }

// EntryError: the entry point a process was started with does not exist.
type EntryError struct {
	Script  string
	Entry   string
	Entries []string // the entry points that do exist, sorted
}

func (e *EntryError) Error() string {
	if len(e.Entries) == 0 {
		return fmt.Sprintf("%s: unknown entry %q (the script defines no entry points)", e.Script, e.Entry)
	}
	return fmt.Sprintf("%s: unknown entry %q (entries: %s)", e.Script, e.Entry, strings.Join(e.Entries, ", "))
}

// KilledError ends a process that was killed (process.kill, Runtime.Kill).
type KilledError struct{ Reason string }

func (e *KilledError) Error() string {
	if e.Reason == "" {
		return "killed"
	}
	return "killed: " + e.Reason
}

// traceback formats L's stack the way Lua's debug.traceback does, from
// the frame list (frames.go): the innermost call first, tail calls marked,
// luarun's own prelude frames left out; the function the prelude called
// is named entry.
func traceback(L *lua.LState, entry string) string {
	var b strings.Builder
	b.WriteString("stack traceback:")
	n := 0
	for f := currentFrame(L); f != nil && n < 30; f = f.Parent {
		if !f.Fn.IsG && f.Fn.Proto.SourceName == preludeName {
			continue
		}
		n++
		b.WriteString("\n\t")
		name := calledName(f)
		if c := f.Parent; c != nil && !c.Fn.IsG && c.Fn.Proto.SourceName == preludeName {
			name = entry
		}
		switch {
		case f.Fn.IsG:
			b.WriteString("[G]: in ")
		default:
			p := f.Fn.Proto
			if f.Pc >= 1 && f.Pc <= len(p.DbgSourcePositions) {
				fmt.Fprintf(&b, "%s:%d: in ", p.SourceName, p.DbgSourcePositions[f.Pc-1])
			} else {
				fmt.Fprintf(&b, "%s: in ", p.SourceName)
			}
		}
		switch {
		case !f.Fn.IsG && f.Fn.Proto.LineDefined == 0:
			b.WriteString("main chunk")
		case name != "" && name != "?":
			fmt.Fprintf(&b, "function '%s'", name)
		case f.Fn.IsG:
			b.WriteString("a Go function")
		default:
			fmt.Fprintf(&b, "function <%s:%d>", f.Fn.Proto.SourceName, f.Fn.Proto.LineDefined)
		}
		if f.TailCall > 0 {
			b.WriteString("\n\t(tail call): ?")
		}
	}
	return b.String()
}

// calledName is the name the caller of f used for it, if it called f by
// a CALL instruction that the compiler named.
func calledName(f *callFrame) string {
	caller := f.Parent
	if caller == nil || caller.Fn.IsG || f.TailCall > 0 {
		return ""
	}
	for _, c := range caller.Fn.Proto.DbgCalls {
		if c.Pc == caller.Pc-1 {
			return c.Name
		}
	}
	return ""
}

// errorMessage renders a Lua error value as text.
func errorMessage(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LString:
		return string(x)
	case nil:
		return "nil"
	case *lua.LTable:
		if mt, ok := x.Metatable.(*lua.LTable); ok {
			if ts := mt.RawGetString("__tostring"); ts != lua.LNil {
				return "(error object with __tostring)"
			}
		}
		return "(error object is a table value)"
	default:
		return v.String()
	}
}

// unwhere removes the position of a prelude.lua frame from an error
// message: a Go function that raises while prelude.lua calls it (as the
// body of a pcall, a coroutine or a process.all function) gets the
// prelude's line as its "where", which names nothing in the script.
func unwhere(v lua.LValue) lua.LValue {
	s, ok := v.(lua.LString)
	if !ok || !strings.HasPrefix(string(s), preludeName+":") {
		return v
	}
	rest := string(s[len(preludeName)+1:])
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if digits == 0 || !strings.HasPrefix(rest[digits:], ": ") {
		return v
	}
	return lua.LString(rest[digits+2:])
}
