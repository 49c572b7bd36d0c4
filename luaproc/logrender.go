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
	"fmt"
	"sort"
	"strings"

	lua "github.com/luarun/luarun/lua"
)

// logRenderer writes Lua values for a log line.
type logRenderer struct {
	L    *lua.LState
	b    strings.Builder
	path map[*lua.LTable]bool // the tables being written (cycles)
}

// logString is v as log.* writes it: a string as it is, anything else
// as renderLogValue writes it.
func logString(L *lua.LState, v lua.LValue) string {
	if s, ok := v.(lua.LString); ok {
		return string(s)
	}
	r := &logRenderer{L: L}
	r.value(v)
	return r.b.String()
}

// value writes v, a string quoted.
func (r *logRenderer) value(v lua.LValue) {
	if s, ok := r.metaString(v); ok {
		r.b.WriteString(s)
		return
	}
	switch x := v.(type) {
	case lua.LString:
		writeQuoted(&r.b, string(x))
	case *lua.LTable:
		r.table(x)
	default:
		if v == jsonNull {
			r.b.WriteString("json.null")
			return
		}
		r.b.WriteString(v.String())
	}
}

// metaString is tostring(v) for a v with a __tostring metamethod, run
// protected: an error is written as <__tostring error: message>.
func (r *logRenderer) metaString(v lua.LValue) (string, bool) {
	fn, ok := r.L.GetMetaField(v, "__tostring").(*lua.LFunction)
	if !ok {
		return "", false
	}
	L := r.L
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

// table writes t as a Lua table constructor.
func (r *logRenderer) table(t *lua.LTable) {
	if r.path[t] {
		r.b.WriteString("<cycle>")
		return
	}
	if r.path == nil {
		r.path = map[*lua.LTable]bool{}
	}
	r.path[t] = true
	defer delete(r.path, t)
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	r.b.WriteByte('{')
	for i := 1; i <= n; i++ {
		if i > 1 {
			r.b.WriteString(", ")
		}
		r.value(t.RawGetInt(i))
	}
	for i, k := range otherKeys(t, n) {
		if i > 0 || n > 0 {
			r.b.WriteString(", ")
		}
		if s, ok := k.(lua.LString); ok && isLuaName(string(s)) {
			r.b.WriteString(string(s))
		} else {
			r.b.WriteByte('[')
			r.value(k)
			r.b.WriteByte(']')
		}
		r.b.WriteString(" = ")
		r.value(t.RawGet(k))
	}
	r.b.WriteByte('}')
}

// otherKeys are t's keys but the sequence 1..n, sorted: numbers, then
// strings, then booleans, then the rest (by their text).
func otherKeys(t *lua.LTable, n int) []lua.LValue {
	var keys []lua.LValue
	t.ForEach(func(k, _ lua.LValue) {
		if x, ok := k.(lua.LNumber); ok && x >= 1 && x <= lua.LNumber(n) && x == lua.LNumber(int(x)) {
			return
		}
		keys = append(keys, k)
	})
	rank := func(v lua.LValue) int {
		switch v.(type) {
		case lua.LNumber:
			return 0
		case lua.LString:
			return 1
		case lua.LBool:
			return 2
		}
		return 3
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if x, ok := a.(lua.LNumber); ok {
			return x < b.(lua.LNumber)
		}
		return a.String() < b.String()
	})
	return keys
}

// luaKeywords are Lua 5.1's reserved words, which are not names.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true,
	"true": true, "until": true, "while": true,
}

// isLuaName reports whether s can be written as a field name (t.s).
func isLuaName(s string) bool {
	if s == "" || luaKeywords[s] {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// writeQuoted writes s as Lua's %q does, but on one line: a newline is
// \n and a carriage return \r rather than a backslash before the byte,
// other control bytes \ddd (three digits).
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 && c != '\t' || c == 0x7f:
			fmt.Fprintf(b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
