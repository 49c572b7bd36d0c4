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

// traceback formats L's stack the way Lua's debug.traceback does.
func traceback(L *lua.LState) string {
	var b strings.Builder
	b.WriteString("stack traceback:")
	for level := 0; level < 40; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sln", dbg, lua.LNil); err != nil {
			break
		}
		b.WriteString("\n\t")
		switch {
		case dbg.What == "G":
			b.WriteString("[G]: in ")
		case dbg.CurrentLine > 0:
			fmt.Fprintf(&b, "%s:%d: in ", dbg.Source, dbg.CurrentLine)
		default:
			fmt.Fprintf(&b, "%s: in ", dbg.Source)
		}
		switch {
		case dbg.What == "main":
			b.WriteString("main chunk")
		case dbg.Name != "" && dbg.Name[0] != '<' && dbg.Name[0] != '(':
			fmt.Fprintf(&b, "function '%s'", dbg.Name)
		case dbg.What == "G":
			b.WriteString("function")
		default:
			fmt.Fprintf(&b, "function <%s:%d>", dbg.Source, dbg.LineDefined)
		}
	}
	return b.String()
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
