package lualib

// string.find, match, gmatch and gsub over the matcher of pattern.go,
// with Lua 5.1's arguments, results and errors.

import (
	"fmt"
	"strings"

	lua "github.com/luarun/luarun/lua"
)

// guard turns a patternError raised by the matcher into a Lua error;
// anything else (an interrupt's error, raised by a tick) goes on
// unchanged. It is deferred around matching only: never around a gsub
// callback, whose errors must not be recovered and raised again at
// every level of nested gsubs.
func guard(L *lua.LState) {
	if r := recover(); r != nil {
		if pe, ok := r.(patternError); ok {
			raise(L, string(pe))
		}
		panic(r)
	}
}

// raise raises msg as Lua 5.1's luaL_error does: prefixed with the
// position of the caller if that is a Lua function, bare if it is a Go
// one (pcall(string.find, ...)). gopher-lua's RaiseError would name the
// nearest Lua function instead.
func raise(L *lua.LState, msg string) {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("Sl", dbg, nil); err == nil && dbg.CurrentLine > 0 {
			msg = fmt.Sprintf("%s:%d: %s", dbg.Source, dbg.CurrentLine, msg)
		}
	}
	L.Error(lua.LString(msg), 0)
}

// startOffset is Lua 5.1's posrelat for an init argument, as a 0-based
// offset clamped to [0, n].
func startOffset(init int64, n int) int {
	if init < 0 {
		init += int64(n) + 1
	}
	init-- // 0-based
	if init < 0 {
		return 0
	}
	if init > int64(n) {
		return n
	}
	return int(init)
}

// pushCaptures pushes the captures of a match src[s:e] (the whole match
// if the pattern has none, when wholeIfNone) and returns how many.
func (ms *matchState) pushCaptures(L *lua.LState, s, e int, wholeIfNone bool) int {
	n := ms.level
	if n == 0 && wholeIfNone {
		L.Push(lua.LString(ms.src[s:e]))
		return 1
	}
	for i := 0; i < n; i++ {
		L.Push(ms.captureValue(i, s, e))
	}
	return n
}

// captureValue is capture i (0: the whole match when there is none).
func (ms *matchState) captureValue(i, s, e int) lua.LValue {
	if i >= ms.level {
		if i == 0 {
			return lua.LString(ms.src[s:e])
		}
		panic(patternError("invalid capture index"))
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		panic(patternError("unfinished capture"))
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(ms.src[c.init : c.init+c.len])
}

// hasSpecials: 5.1's strpbrk(p, SPECIALS).
func hasSpecials(pat string) bool { return strings.ContainsAny(pat, specials) }

func strFind(L *lua.LState) int  { return findAux(L, true) }
func strMatch(L *lua.LState) int { return findAux(L, false) }

func findAux(L *lua.LState, find bool) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	init := startOffset(L.OptCInteger(3, 1), len(src))
	if find && (lua.LVAsBool(L.Get(4)) || !hasSpecials(pat)) { // a plain search
		if i := strings.Index(src[init:], pat); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(pat)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	defer guard(L)
	var ms matchState
	anchored := ms.initAnchored(L, src, pat)
	s, e := ms.find(init, anchored)
	if s < 0 {
		L.Push(lua.LNil)
		return 1
	}
	if find {
		L.Push(lua.LNumber(s + 1))
		L.Push(lua.LNumber(e))
		return ms.pushCaptures(L, s, e, false) + 2
	}
	return ms.pushCaptures(L, s, e, true)
}

// strGmatch is string.gmatch: an iterator over the matches. A leading
// '^' is an ordinary character here, as in 5.1.
func strGmatch(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	ms := new(matchState) // kept by the iterator
	ms.init(L, src, pat)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		defer guard(L)
		ms.L = L // the thread calling the iterator counts the steps
		if pos > len(src) {
			return 0
		}
		s, e := ms.find(pos, false)
		if s < 0 {
			pos = len(src) + 1
			return 0
		}
		pos = e
		if e == s {
			pos++ // an empty match: go on at least one position
		}
		return ms.pushCaptures(L, s, e, true)
	}))
	return 1
}

// strGsub is string.gsub(s, pattern, repl [, n]).
func strGsub(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	repl := L.Get(3)
	switch repl.Type() {
	case lua.LTNumber, lua.LTString, lua.LTFunction, lua.LTTable:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptCInt(4, len(src)+1)
	if rs, ok := repl.(lua.LString); ok && pat != "" && !hasSpecials(pat) && !strings.Contains(pat, ")") && !strings.Contains(string(rs), "%") {
		out, n := replacePlain(L, src, pat, string(rs), maxN)
		L.Push(lua.LString(out))
		L.Push(lua.LNumber(n))
		return 2
	}
	var ms matchState
	anchored := ms.initAnchored(L, src, pat)
	var out string
	var n int
	switch r := repl.(type) {
	case lua.LString:
		out, n = ms.gsubText(string(r), anchored, maxN)
	case lua.LNumber:
		out, n = ms.gsubText(lua.LVAsString(r), anchored, maxN)
	default:
		out, n = ms.gsubLua(repl, anchored, maxN)
	}
	L.Push(lua.LString(out))
	L.Push(lua.LNumber(n))
	return 2
}

// gsubText is gsub by a replacement string (with %0-%9): no Lua runs, so
// one guard covers it all.
func (ms *matchState) gsubText(repl string, anchored bool, maxN int) (string, int) {
	defer guard(ms.L)
	b := builder{L: ms.L}
	n, pos := 0, 0
	for n < maxN && pos <= len(ms.src) {
		s, e := ms.find(pos, anchored)
		if s < 0 {
			break
		}
		b.WriteString(ms.src[pos:s]) // what lies before the match, unchanged
		n++
		ms.addString(&b, repl, s, e)
		pos = ms.next(&b, s, e)
		if anchored {
			break
		}
	}
	return ms.finish(&b, pos), n
}

// gsubLua is gsub by a function or a table, which run Lua (the callback,
// __index): each find and capture is guarded alone (addValue).
func (ms *matchState) gsubLua(repl lua.LValue, anchored bool, maxN int) (string, int) {
	b := builder{L: ms.L}
	n, pos := 0, 0
	for n < maxN && pos <= len(ms.src) {
		s, e := ms.findGuarded(pos, anchored)
		if s < 0 {
			break
		}
		b.WriteString(ms.src[pos:s])
		n++
		ms.addValue(ms.L, &b, repl, s, e)
		pos = ms.next(&b, s, e)
		if anchored {
			break
		}
	}
	return ms.finish(&b, pos), n
}

// next is where gsub goes on after the match src[s:e]: after it, or
// after the next character (which it keeps) for an empty match.
func (ms *matchState) next(b *builder, s, e int) int {
	if e > s {
		return e
	}
	if s < len(ms.src) {
		b.WriteByte(ms.src[s])
	}
	return s + 1
}

// finish appends what lies after pos and returns the result.
func (ms *matchState) finish(b *builder, pos int) string {
	if pos < len(ms.src) {
		b.WriteString(ms.src[pos:])
	}
	return b.String()
}

// replacePlain is gsub of a pattern without specials by a replacement
// without '%': a text search.
func replacePlain(L *lua.LState, src, pat, repl string, maxN int) (string, int) {
	b := builder{L: L}
	n, pos := 0, 0
	for n < maxN {
		i := strings.Index(src[pos:], pat)
		if i < 0 {
			break
		}
		if n == 0 {
			b.need(len(src))
		}
		b.WriteString(src[pos : pos+i])
		b.WriteString(repl)
		pos += i + len(pat)
		n++
	}
	if n == 0 {
		return src, 0
	}
	b.WriteString(src[pos:])
	return b.String(), n
}

// findGuarded is find for gsub, which calls Lua between finds and so
// guards each find alone.
func (ms *matchState) findGuarded(init int, anchored bool) (start, end int) {
	defer guard(ms.L)
	return ms.find(init, anchored)
}

// addValue appends the replacement of the match src[s:e] (add_value).
// The captures are taken under guard; the callback and the table lookup
// (which may run Lua: __index) outside it.
func (ms *matchState) addValue(L *lua.LState, b *builder, repl lua.LValue, s, e int) {
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString:
		ms.addStringGuarded(b, string(r), s, e)
		return
	case lua.LNumber:
		ms.addStringGuarded(b, lua.LVAsString(r), s, e)
		return
	case *lua.LFunction:
		L.Push(r)
		n := ms.pushCapturesGuarded(L, s, e)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	case *lua.LTable:
		v = L.GetTable(r, ms.captureGuarded(0, s, e))
	}
	switch v := v.(type) {
	case lua.LString:
		b.WriteString(string(v))
	case lua.LNumber:
		b.WriteString(lua.LVAsString(v))
	default:
		if !lua.LVAsBool(v) { // nil or false: keep the original text
			b.WriteString(ms.src[s:e])
			return
		}
		raise(L, "invalid replacement value (a "+v.Type().String()+")")
	}
}

func (ms *matchState) addStringGuarded(b *builder, news string, s, e int) {
	defer guard(ms.L)
	ms.addString(b, news, s, e)
}

func (ms *matchState) pushCapturesGuarded(L *lua.LState, s, e int) int {
	defer guard(L)
	return ms.pushCaptures(L, s, e, true)
}

func (ms *matchState) captureGuarded(i, s, e int) lua.LValue {
	defer guard(ms.L)
	return ms.captureValue(i, s, e)
}

// addString appends a replacement string, with %0-%9 and %%.
func (ms *matchState) addString(b *builder, news string, s, e int) {
	for i := 0; i < len(news); i++ {
		c := news[i]
		if c != lEsc {
			b.WriteByte(c)
			continue
		}
		i++
		var d byte // 5.1 reads the C string's terminator after a final '%'
		if i < len(news) {
			d = news[i]
		}
		switch {
		case d < '0' || d > '9':
			b.WriteByte(d)
		case d == '0':
			b.WriteString(ms.src[s:e])
		default:
			b.WriteString(lua.LVAsString(ms.captureValue(int(d-'1'), s, e)))
		}
	}
}

// strUpper and strLower are string.upper and lower of the C locale: ASCII
// letters only, byte by byte (gopher-lua's changed every Unicode letter,
// "é" too, where Lua 5.1 leaves other bytes alone).
func strUpper(L *lua.LState) int { return mapASCII(L, 'a', 'z', 'A'-'a') }
func strLower(L *lua.LState) int { return mapASCII(L, 'A', 'Z', 'a'-'A') }

func mapASCII(L *lua.LState, lo, hi byte, delta int) int {
	s := L.CheckString(1)
	i := 0
	for i < len(s) && (s[i] < lo || s[i] > hi) {
		i++
	}
	if i == len(s) { // nothing to change: the same string
		L.Push(lua.LString(s))
		return 1
	}
	L.Charge(len(s))
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= lo && c <= hi {
			b[i] = byte(int(c) + delta)
		}
	}
	L.Push(lua.LString(b))
	return 1
}
