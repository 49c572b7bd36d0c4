package luaproc

// inspect(v [, {depth = n}]): a value written as Lua source would write
// it, for debugging: {1, "two", a = {b = true}, ["x y"] = 3}.
//
// RenderLua is the renderer, shared with whatever else writes Lua values
// for people (log lines). Its rules:
//
//   - a table's list part (keys 1..n, n the first missing index less one)
//     comes first, values only; the other keys follow sorted: numbers in
//     ascending order, then strings (byte order), then booleans, then
//     anything else (by its tostring). A string key that is a Lua name
//     is written `name = `, other keys `[key] = `.
//   - strings are quoted and escaped as Lua 5.1 reads them back (\n, \r,
//     \t, \\, \", \ddd for other control bytes and invalid UTF-8), so a
//     rendering is always one line.
//   - a table met again inside itself (a cycle) is written <cycle>; a
//     table shared by two branches that is not a cycle is written twice.
//   - past maxDepth nested tables (0: no limit but maxRenderDepth, 200)
//     a table is written {...}.
//   - functions, userdata and threads are written <tostring>, e.g.
//     <function: 0xc000123456>. Metatables and metamethods are never
//     looked at: rendering cannot raise, yield or run script code.
//
// A ticker, when given, counts each value written as a step of its
// interrupt budget, so a kill stops the rendering of a huge table; the
// log path passes nil (logging never raises).
//
// log.* writes values with the same renderer in its own mode (logString,
// logrender.go): there a value whose metatable has __tostring is written
// as tostring writes it, run protected, json.null as json.null, and
// functions, userdata and threads without the angle brackets.

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/luaproc/lualib"
)

// maxRenderDepth bounds the nesting any rendering follows, whatever
// maxDepth says: the renderer recurses on the Go stack, and a table
// nested millions deep would otherwise take it past Go's limit, which
// ends the program, not the process.
const maxRenderDepth = 200

// RenderLua writes v as Lua would (see the file comment).
func RenderLua(v lua.LValue, maxDepth int, ticker *lua.LState) string {
	r := renderer{maxDepth: maxDepth, ticker: ticker, open: map[*lua.LTable]bool{}}
	r.value(v, 0)
	return r.b.String()
}

type renderer struct {
	b        strings.Builder
	maxDepth int
	ticker   *lua.LState
	logL     *lua.LState          // log.*'s mode: the state that runs __tostring; nil for inspect
	open     map[*lua.LTable]bool // the tables being written (a cycle's ancestors)
}

func (r *renderer) value(v lua.LValue, depth int) {
	if r.ticker != nil {
		r.ticker.Tick()
	}
	if r.logL != nil && r.logValue(v) {
		return
	}
	switch x := v.(type) {
	case *lua.LNilType:
		r.b.WriteString("nil")
	case lua.LBool:
		r.b.WriteString(strconv.FormatBool(bool(x)))
	case lua.LNumber:
		r.b.WriteString(x.String())
	case lua.LString:
		writeLuaString(&r.b, string(x))
	case *lua.LTable:
		r.table(x, depth)
	default:
		r.b.WriteString("<" + v.String() + ">")
	}
}

func (r *renderer) table(t *lua.LTable, depth int) {
	switch {
	case r.open[t]:
		r.b.WriteString("<cycle>")
		return
	case r.maxDepth > 0 && depth >= r.maxDepth, depth >= maxRenderDepth:
		r.b.WriteString("{...}")
		return
	}
	r.open[t] = true
	defer delete(r.open, t)
	n, keys := tableLayout(t)
	r.b.WriteByte('{')
	for i := 1; i <= n; i++ {
		if i > 1 {
			r.b.WriteString(", ")
		}
		r.value(t.RawGetInt(i), depth+1)
	}
	for i, k := range keys {
		if i > 0 || n > 0 {
			r.b.WriteString(", ")
		}
		r.key(k, depth)
		r.b.WriteString(" = ")
		r.value(t.RawGet(k), depth+1)
	}
	r.b.WriteByte('}')
}

// key writes k as a table constructor's key, without " = ".
func (r *renderer) key(k lua.LValue, depth int) {
	if s, ok := k.(lua.LString); ok && isLuaName(string(s)) {
		r.b.WriteString(string(s))
		return
	}
	r.b.WriteByte('[')
	r.value(k, depth+1)
	r.b.WriteByte(']')
}

// tableLayout returns the length of t's list part (1..n all present) and
// its other keys, sorted.
func tableLayout(t *lua.LTable) (int, []lua.LValue) {
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	var keys []lua.LValue
	t.ForEach(func(k, _ lua.LValue) {
		if f, ok := k.(lua.LNumber); ok && f >= 1 && f <= lua.LNumber(n) && f == lua.LNumber(int(f)) {
			return
		}
		keys = append(keys, k)
	})
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return n, keys
}

// keyRank orders keys by kind: numbers, strings, booleans, the rest.
func keyRank(k lua.LValue) int {
	switch k.(type) {
	case lua.LNumber:
		return 0
	case lua.LString:
		return 1
	case lua.LBool:
		return 2
	}
	return 3
}

func keyLess(a, b lua.LValue) bool {
	ra, rb := keyRank(a), keyRank(b)
	if ra != rb {
		return ra < rb
	}
	switch x := a.(type) {
	case lua.LNumber:
		return x < b.(lua.LNumber)
	case lua.LBool:
		return !bool(x) && bool(b.(lua.LBool))
	}
	return a.String() < b.String()
}

// luaKeywords are Lua 5.1's reserved words, which are not names.
var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true,
	"false": true, "for": true, "function": true, "if": true, "in": true, "local": true,
	"nil": true, "not": true, "or": true, "repeat": true, "return": true, "then": true,
	"true": true, "until": true, "while": true,
}

// isLuaName reports whether s can be written as a field name (a.s).
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

// writeLuaString writes s quoted, escaped so that Lua 5.1 reads it back
// and the result is one line of valid UTF-8.
func writeLuaString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c >= 0x80 {
				if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size > 1 {
					b.WriteString(s[i : i+size])
					i += size
					continue
				}
			}
			if c < 0x20 || c == 0x7f || c >= 0x80 {
				writeDecimalEscape(b, c, s[i+1:])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
}

// writeDecimalEscape writes \ddd for c, three digits when a digit
// follows (so that it is not read as part of the escape).
func writeDecimalEscape(b *strings.Builder, c byte, rest string) {
	b.WriteByte('\\')
	if rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		b.WriteString(strconv.FormatInt(int64(c)+1000, 10)[1:])
		return
	}
	b.WriteString(strconv.Itoa(int(c)))
}

// luaInspect is the global inspect(v [, opts]), opts = {depth = n}.
func luaInspect(L *lua.LState) int {
	depth := 0
	if opts, ok := L.Get(2).(*lua.LTable); ok {
		if err := lualib.CheckOptions(opts, "depth"); err != nil {
			L.RaiseError("inspect: %s", err.Error())
		}
		switch d := opts.RawGetString("depth").(type) {
		case lua.LNumber:
			if d < 1 {
				L.ArgError(2, "depth must be at least 1")
			}
			depth = int(d)
		case *lua.LNilType:
		default:
			L.ArgError(2, "depth: number expected, got "+d.Type().String())
		}
	} else if L.Get(2) != lua.LNil {
		L.ArgError(2, "table expected, got "+L.Get(2).Type().String())
	}
	L.Push(lua.LString(RenderLua(L.CheckAny(1), depth, L)))
	return 1
}
