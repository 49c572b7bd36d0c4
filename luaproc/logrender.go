package luaproc

// What log.* writes for the values a script passes: a table as Lua would
// write it, {a = {b = 1}, list = {1, 2}}, in every log format (in JSON as
// a string), and never an error.
//
// A table is written with its sequence part first ({1, 2}), then its other
// keys sorted (numbers, then strings, then the rest), a string key that is
// a Lua name as name = v and any other as [k] = v; strings inside a table
// are quoted as Lua's %q would (a string passed itself is written as it
// is). A table already being written (a cycle) is written <cycle>. A value
// whose metatable has __tostring is written as tostring writes it; if
// __tostring raises, or returns no string, the value is written
// <__tostring error: message> — logging never raises (the __tostring runs
// in a protected call). Functions, coroutines and userdata are written as
// tostring writes them. The result then goes through logText (one line).

import (
	lua "github.com/luarun/luarun/lua"
)

// logString is v as log.* writes it: a string as it is, anything else
// as the renderer of inspect.go writes it in log mode.
func logString(L *lua.LState, v lua.LValue) string {
	if s, ok := v.(lua.LString); ok {
		return string(s)
	}
	r := renderer{logL: L, open: map[*lua.LTable]bool{}}
	r.value(v, 0)
	return r.b.String()
}

// logValue writes what log mode writes differently from inspect, and
// says whether it did: a value with __tostring, json.null, and values
// that are neither tables nor strings nor simple (as tostring writes
// them).
func (r *renderer) logValue(v lua.LValue) bool {
	if s, ok := r.metaString(v); ok {
		r.b.WriteString(s)
		return true
	}
	switch v.(type) {
	case *lua.LNilType, lua.LBool, lua.LNumber, lua.LString, *lua.LTable:
		return false
	}
	if v == jsonNull {
		r.b.WriteString("json.null")
	} else {
		r.b.WriteString(v.String())
	}
	return true
}

// metaString is tostring(v) for a v with a __tostring metamethod, run
// protected: an error is written as <__tostring error: message>.
func (r *renderer) metaString(v lua.LValue) (string, bool) {
	fn, ok := r.logL.GetMetaField(v, "__tostring").(*lua.LFunction)
	if !ok {
		return "", false
	}
	L := r.logL
	top := L.GetTop()
	defer L.SetTop(top)
	L.Push(fn)
	L.Push(v)
	if err := L.PCall(1, 1, nil); err != nil {
		return "<__tostring error: " + errorText(err) + ">", true
	}
	switch s := L.Get(-1).(type) {
	case lua.LString:
		return string(s), true
	case lua.LNumber:
		return s.String(), true
	}
	return "<__tostring error: '__tostring' must return a string>", true
}
