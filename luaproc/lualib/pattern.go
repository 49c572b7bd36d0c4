package lualib

// Lua 5.1 patterns, matched over the bytes of a Go string.
//
// This is lstrlib.c's backtracking matcher (Lua 5.1.5) in Go: the same
// items (single characters, classes %a %c %d %l %p %s %u %w %x %z and
// their complements, sets [...] with ranges and classes, ., the
// quantifiers * + - ?, anchors ^ and $, captures ( ) and position
// captures (), back-references %1-%9, %bxy and the frontier %f[set]),
// with the same results and the same errors. Positions and captures are
// byte offsets into the subject, so matching allocates nothing; only the
// strings handed back to Lua are made, once a match is found.
//
// Where it differs from 5.1's C: a pattern may contain "\0" and means it
// literally (5.1 stops reading a pattern at its first zero byte: the
// manual says patterns cannot contain them), and the recursion is bounded
// (maxMatchDepth): a pattern that would recurse deeper raises "pattern
// too complex" where 5.1 would overflow the C stack.
//
// Errors and interrupts: a malformed pattern or bad capture panics a
// patternError, which the library function turns into its Lua error
// (guard) — around the matching only, never around a gsub callback, so
// an error raised by a callback unwinds through nested gsubs at the cost
// of one panic, not a recover and a re-panic per level (which made 8,000
// levels take 17 s). Every call of match and every 4,096 bytes a
// quantifier or %b scans is a step of the state's interrupt budget
// (lua.LState.Tick): a kill, step limit or shutdown stops a backtracking
// match as it stops a Lua loop.
//
// Invariants of a matchState during match: 0 <= level <= maxCaptures;
// captures below level are closed (len >= 0), position captures
// (capPosition) or open (capUnfinished); a capture's init is an offset
// into src.

import (
	"strings"

	lua "github.com/luarun/luarun/lua"
)

const (
	maxCaptures   = 32 // LUA_MAXCAPTURES
	capUnfinished = -1
	capPosition   = -2
	// maxMatchDepth bounds match's recursion (captures, ?, *, +, -): deep
	// enough for any pattern a program writes, shallow enough for Go's stack.
	maxMatchDepth = 20000
	lEsc          = '%'
	specials      = "^$*+?.([%-"
)

// patternError is an error of a malformed pattern or a bad capture,
// raised by the matcher (panic) and turned into a Lua error by the
// library function that called it (guard).
type patternError string

func (e patternError) Error() string { return string(e) }

type capture struct {
	init, len int
}

// matchState is one matching of pat against src.
type matchState struct {
	src, pat string
	level    int // captures made so far
	depth    int // match's recursion
	capture  [maxCaptures]capture
	prefix   string // literalPrefix: every match starts with it
	// L counts the steps (tick): the running thread of the library call
	// (gmatch's iterator sets it per call); nil in tests of the matcher
	// alone.
	L      *lua.LState
	budget int // steps before the next spend (tick)
}

// tick counts n steps of matching: a countdown of its own (no load
// through L on the matcher's hot path), handed to L's interrupt budget
// (lua.LState.TickN) a batch at a time.
func (ms *matchState) tick(n int) {
	ms.budget -= n
	if ms.budget < 0 {
		ms.spend()
	}
}

// matchBatch is how many steps the matcher counts before it hands them
// to L's budget. A match shorter than that hands none: it returns to the
// VM, which checks the interrupt itself, well within the 10 ms.
const matchBatch = 256

func (ms *matchState) spend() {
	n := matchBatch - ms.budget
	ms.budget = matchBatch
	if ms.L != nil {
		ms.L.TickN(n)
	}
}

// Character classes of the C locale, one bit each per byte.
const (
	clAlpha = 1 << iota
	clCntrl
	clDigit
	clLower
	clPunct
	clSpace
	clUpper
	clXdigit
)

var classBits [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		var b uint8
		switch {
		case c >= 'a' && c <= 'z':
			b |= clAlpha | clLower
		case c >= 'A' && c <= 'Z':
			b |= clAlpha | clUpper
		case c >= '0' && c <= '9':
			b |= clDigit
		}
		if c < 32 || c == 127 {
			b |= clCntrl
		}
		if c > 32 && c < 127 && b&(clAlpha|clDigit) == 0 {
			b |= clPunct
		}
		if c == ' ' || (c >= '\t' && c <= '\r') {
			b |= clSpace
		}
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') {
			b |= clXdigit
		}
		classBits[c] = b
	}
}

// classMasks are the classes' bits by their lower-case letter (%z is
// handled apart: the zero byte).
var classMasks = [128]uint8{'a': clAlpha, 'c': clCntrl, 'd': clDigit, 'l': clLower, 'p': clPunct,
	's': clSpace, 'u': clUpper, 'w': clAlpha | clDigit, 'x': clXdigit}

// matchClass reports whether c is in class cl (the letter after %); an
// upper-case class letter is the complement, any other cl is itself.
func matchClass(c byte, cl byte) bool {
	if classBits[cl]&clAlpha == 0 { // not a letter: %., %%, %]...
		return cl == c
	}
	lower := cl | 0x20
	var res bool
	switch mask := classMasks[lower]; {
	case lower == 'z':
		res = c == 0
	case mask != 0:
		res = classBits[c]&mask != 0
	default:
		return cl == c
	}
	if classBits[cl]&clUpper != 0 {
		return !res
	}
	return res
}

// patAt is the pattern's byte at i, or 0 past its end (where 5.1 reads
// the C string's terminator).
func (ms *matchState) patAt(i int) byte {
	if i < len(ms.pat) {
		return ms.pat[i]
	}
	return 0
}

// classEnd returns the index just past the single-character class that
// starts at p.
func (ms *matchState) classEnd(p int) int {
	c := ms.pat[p]
	p++
	switch c {
	case lEsc:
		if p >= len(ms.pat) {
			panic(patternError("malformed pattern (ends with '%')"))
		}
		return p + 1
	case '[':
		if ms.patAt(p) == '^' {
			p++
		}
		for { // look for a ']'
			if p >= len(ms.pat) {
				panic(patternError("malformed pattern (missing ']')"))
			}
			c := ms.pat[p]
			p++
			if c == lEsc && p < len(ms.pat) {
				p++ // skip escapes (e.g. '%]')
			}
			if ms.patAt(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchBracketClass reports whether c is in the set pat[p:ec+1], where
// pat[p] is '[' and pat[ec] its ']'.
func (ms *matchState) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if ms.pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case ms.pat[p] == lEsc:
			p++
			if matchClass(c, ms.pat[p]) {
				return sig
			}
		case ms.pat[p+1] == '-' && p+2 < ec:
			p += 2
			if ms.pat[p-2] <= c && c <= ms.pat[p] {
				return sig
			}
		case ms.pat[p] == c:
			return sig
		}
	}
	return !sig
}

// singleMatch reports whether c matches the class pat[p:ep].
func (ms *matchState) singleMatch(c byte, p, ep int) bool {
	switch ms.pat[p] {
	case '.':
		return true
	case lEsc:
		return matchClass(c, ms.pat[p+1])
	case '[':
		return ms.matchBracketClass(c, p, ep-1)
	}
	return ms.pat[p] == c
}

// match matches the pattern from p against the subject from s; it
// returns the end of the match, or -1.
func (ms *matchState) match(s, p int) int {
	ms.depth++
	ms.tick(1)
	if ms.depth > maxMatchDepth {
		panic(patternError("pattern too complex"))
	}
	res := ms.doMatch(s, p)
	ms.depth--
	return res
}

func (ms *matchState) doMatch(s, p int) int {
	for {
		if p >= len(ms.pat) { // end of pattern
			return s
		}
		switch ms.pat[p] {
		case '(':
			if ms.patAt(p+1) == ')' { // position capture
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '$':
			if p+1 == len(ms.pat) { // the last char of the pattern
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		case lEsc:
			switch ms.patAt(p + 1) {
			case 'b': // balanced string
				s = ms.matchBalance(s, p+2)
				if s < 0 {
					return -1
				}
				p += 4
				continue
			case 'f': // frontier
				p += 2
				if ms.patAt(p) != '[' {
					panic(patternError("missing '[' after '%f' in pattern"))
				}
				ep := ms.classEnd(p)
				var prev, cur byte
				if s > 0 {
					prev = ms.src[s-1]
				}
				if s < len(ms.src) {
					cur = ms.src[s]
				}
				if ms.matchBracketClass(prev, p, ep-1) || !ms.matchBracketClass(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			default:
				if d := ms.patAt(p + 1); d >= '0' && d <= '9' { // back-reference
					s = ms.matchCapture(s, d)
					if s < 0 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		// a single-character class, maybe with a quantifier
		ep := ms.classEnd(p)
		m := s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep)
		switch ms.patAt(ep) {
		case '?':
			if m {
				if res := ms.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
			continue
		case '*':
			return ms.maxExpand(s, p, ep)
		case '+':
			if !m {
				return -1
			}
			return ms.maxExpand(s+1, p, ep)
		case '-':
			return ms.minExpand(s, p, ep)
		}
		if !m {
			return -1
		}
		s++
		p = ep
	}
}

func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	if len(ms.src)-s <= scanChunk { // short: no tick to place
		for s+i < len(ms.src) && ms.singleMatch(ms.src[s+i], p, ep) {
			i++
		}
	} else {
		i = ms.scan(s, p, ep)
	}
	for ; i >= 0; i-- { // try the longest first
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

// scanChunk is how many bytes a scan of the subject (scan, matchBalance)
// reads between two steps of the interrupt budget.
const scanChunk = 4096

// scan counts how many bytes from s match the class pat[p:ep], in chunks
// of scanChunk with a tick after each (the inner loop costs what a plain
// loop to the end of the subject does).
func (ms *matchState) scan(s, p, ep int) int {
	src := ms.src[s:]
	i := 0
	for {
		chunk := src[i:min(len(src), i+scanChunk)]
		j := 0
		for j < len(chunk) && ms.singleMatch(chunk[j], p, ep) {
			j++
		}
		i += j
		if j < len(chunk) || i == len(src) {
			return i
		}
		ms.tick(scanChunk / 4)
	}
}

func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep) {
			s++
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	if ms.level >= maxCaptures {
		panic(patternError("too many captures"))
	}
	ms.capture[ms.level] = capture{init: s, len: what}
	ms.level++
	res := ms.match(s, p)
	if res < 0 {
		ms.level-- // undo the capture
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := ms.captureToClose()
	ms.capture[l].len = s - ms.capture[l].init
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].len = capUnfinished
	}
	return res
}

func (ms *matchState) captureToClose() int {
	for l := ms.level - 1; l >= 0; l-- {
		if ms.capture[l].len == capUnfinished {
			return l
		}
	}
	panic(patternError("invalid pattern capture"))
}

func (ms *matchState) checkCapture(d byte) int {
	l := int(d) - '1'
	if l < 0 || l >= ms.level || ms.capture[l].len == capUnfinished {
		panic(patternError("invalid capture index"))
	}
	return l
}

func (ms *matchState) matchCapture(s int, d byte) int {
	c := ms.capture[ms.checkCapture(d)]
	n := c.len
	if n < 0 { // a position capture: 5.1 compares (size_t)-2 bytes, never true
		return -1
	}
	if len(ms.src)-s >= n && ms.src[c.init:c.init+n] == ms.src[s:s+n] {
		return s + n
	}
	return -1
}

func (ms *matchState) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		panic(patternError("unbalanced pattern"))
	}
	if s >= len(ms.src) || ms.src[s] != ms.pat[p] {
		return -1
	}
	b, e := ms.pat[p], ms.pat[p+1]
	cont := 1
	for s++; s < len(ms.src); {
		for lim := min(len(ms.src), s+scanChunk); s < lim; s++ {
			switch ms.src[s] {
			case e:
				cont--
				if cont == 0 {
					return s + 1
				}
			case b:
				cont++
			}
		}
		ms.tick(scanChunk / 4)
	}
	return -1
}

// find looks for the pattern in src from init (an offset), trying each
// start position unless anchored; it returns the match's start and end,
// or -1. Captures are in ms.
func (ms *matchState) find(init int, anchored bool) (start, end int) {
	for s := init; s <= len(ms.src); s++ {
		if ms.prefix != "" && !anchored {
			i := strings.Index(ms.src[s:], ms.prefix)
			if i < 0 {
				return -1, -1
			}
			s += i
		}
		ms.level, ms.depth = 0, 0
		if e := ms.match(s, 0); e >= 0 {
			return s, e
		}
		if anchored {
			break
		}
	}
	return -1, -1
}

// init prepares ms for matching pat against src. (A method rather than a
// constructor, so that a caller's matchState can stay on its stack.)
func (ms *matchState) init(L *lua.LState, src, pat string) {
	*ms = matchState{src: src, pat: pat}
	ms.L, ms.budget = L, matchBatch // apart: with L in the literal, Go builds it aside and copies it
	ms.prefix = ms.literalPrefix()
}

// initAnchored is init for find, match and gsub, where a leading '^'
// anchors the pattern (not in gmatch); it reports whether it did.
func (ms *matchState) initAnchored(L *lua.LState, src, pat string) (anchored bool) {
	anchored = strings.HasPrefix(pat, "^")
	if anchored {
		pat = pat[1:]
	}
	ms.init(L, src, pat)
	return anchored
}

// literalPrefix is the text every match must start with: the pattern's
// leading plain characters, up to one a quantifier makes optional or
// repeats.
func (ms *matchState) literalPrefix() string {
	p := 0
	for p < len(ms.pat) {
		c := ms.pat[p]
		next := p + 1
		if c == lEsc {
			if p+1 >= len(ms.pat) {
				break
			}
			e := ms.pat[p+1]
			if classBits[e]&(clAlpha|clDigit) != 0 { // a class, %b, %f or a back-reference
				break
			}
			next = p + 2
		} else if strings.IndexByte(specials, c) >= 0 || c == ')' {
			break
		}
		if next < len(ms.pat) && strings.IndexByte("*?-+", ms.pat[next]) >= 0 {
			break
		}
		p = next
	}
	if p == 0 {
		return ""
	}
	if !strings.Contains(ms.pat[:p], "%") {
		return ms.pat[:p]
	}
	var b strings.Builder
	for i := 0; i < p; i++ {
		if ms.pat[i] == lEsc {
			i++
		}
		b.WriteByte(ms.pat[i])
	}
	return b.String()
}
