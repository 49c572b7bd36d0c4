package lualib

// string.format with Lua 5.1's conversions (lstrlib.c's str_format): C's
// printf for each %-spec, the number cast to an integer for d, i, c, o,
// u, x and X, %q quoting as 5.1 does, %s taking strings and numbers only.
// The common specs without flags or width are appended directly
// (strconv); the others go through fmt with the same spec, whose verbs
// agree with C's for these conversions (%g is given C's default
// precision, 6).

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/luarun/luarun/lua"
)

const formatFlags = "-+ #0"

// formatSpec is one %-spec: its flags, width and precision as written.
type formatSpec struct {
	flags            string
	width, precision int // -1: not given
	conv             byte
}

// parseSpec reads the spec after a '%' at fmt[i:] and returns it and the
// index past its conversion letter.
func parseSpec(L *lua.LState, f string, i int) (formatSpec, int) {
	sp := formatSpec{width: -1, precision: -1}
	start := i
	for i < len(f) && strings.IndexByte(formatFlags, f[i]) >= 0 {
		i++
	}
	if i-start > len(formatFlags) {
		raise(L, "invalid format (repeated flags)")
	}
	sp.flags = f[start:i]
	digits := func() int {
		n, d := 0, 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			n = n*10 + int(f[i]-'0')
			i++
			d++
		}
		if d > 2 {
			raise(L, "invalid format (width or precision too long)")
		}
		if d == 0 {
			return -1
		}
		return n
	}
	sp.width = digits()
	if i < len(f) && f[i] == '.' {
		i++
		sp.precision = digits()
		if sp.precision < 0 {
			sp.precision = 0
		}
	}
	if i >= len(f) {
		raise(L, "invalid option '%' to 'format'")
	}
	sp.conv = f[i]
	return sp, i + 1
}

// plain: no flags and no width, so the value can be appended as is.
func (sp formatSpec) plain() bool { return sp.flags == "" && sp.width < 0 }

// goFormat is the spec for fmt, with verb.
func (sp formatSpec) goFormat(verb byte) string {
	var b strings.Builder
	b.WriteByte('%')
	b.WriteString(sp.flags)
	if sp.width >= 0 {
		b.WriteString(strconv.Itoa(sp.width))
	}
	if sp.precision >= 0 {
		b.WriteByte('.')
		b.WriteString(strconv.Itoa(sp.precision))
	}
	b.WriteByte(verb)
	return b.String()
}

// strFormat is string.format(fmt, ...).
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	arg := 1
	buf := make([]byte, 0, len(f)+16)
	for i := 0; i < len(f); {
		c := f[i]
		if c != '%' {
			j := strings.IndexByte(f[i:], '%')
			if j < 0 {
				j = len(f) - i
			}
			buf = append(buf, f[i:i+j]...)
			i += j
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			buf = append(buf, '%')
			i++
			continue
		}
		L.Tick() // a step of the interrupt budget: a kill stops a long format
		var sp formatSpec
		sp, i = parseSpec(L, f, i)
		arg++
		buf = formatOne(L, buf, sp, arg)
	}
	L.Charge(cap(buf) + len(buf)) // the buffer's growth, bounded by the arguments', and the result
	L.Push(lua.LString(buf))
	return 1
}

// formatOne appends argument arg formatted by sp.
func formatOne(L *lua.LState, buf []byte, sp formatSpec, arg int) []byte {
	switch sp.conv {
	case 'd', 'i':
		n := int64(L.CheckNumber(arg))
		if sp.plain() && sp.precision < 0 {
			return strconv.AppendInt(buf, n, 10)
		}
		return fmt.Appendf(buf, sp.goFormat('d'), n)
	case 'c': // the byte itself, not a UTF-8 encoding
		return sp.pad(buf, string([]byte{byte(int64(L.CheckNumber(arg)))}))
	case 'o', 'u', 'x', 'X':
		n := toUnsigned(float64(L.CheckNumber(arg)))
		if n == 0 && (sp.conv == 'x' || sp.conv == 'X') {
			sp.flags = strings.ReplaceAll(sp.flags, "#", "") // C writes no 0x for 0
		}
		sp.flags = signFlags.Replace(sp.flags)
		verb := sp.conv
		if verb == 'u' {
			verb = 'd'
		}
		if sp.plain() && sp.precision < 0 {
			switch verb {
			case 'd':
				return strconv.AppendUint(buf, n, 10)
			case 'x':
				return strconv.AppendUint(buf, n, 16)
			}
		}
		return fmt.Appendf(buf, sp.goFormat(verb), n)
	case 'e', 'E', 'f', 'g', 'G':
		x := float64(L.CheckNumber(arg))
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return sp.pad(buf, cNonFinite(x, sp))
		}
		if sp.precision < 0 {
			sp.precision = 6
		}
		if sp.plain() && (sp.conv == 'f' || sp.conv == 'e' || sp.conv == 'g') {
			return strconv.AppendFloat(buf, x, sp.conv, sp.precision, 64)
		}
		return fmt.Appendf(buf, sp.goFormat(sp.conv), x)
	case 'q':
		return appendQuoted(buf, L.CheckString(arg))
	case 's':
		s := L.CheckString(arg)
		if sp.precision >= 0 && sp.precision < len(s) {
			s = s[:sp.precision] // bytes, as C counts (fmt counts runes)
		}
		return sp.pad(buf, s)
	}
	raise(L, fmt.Sprintf("invalid option '%%%c' to 'format'", sp.conv))
	return buf
}

// signFlags removes + and space from a conversion's flags: C ignores
// them for an unsigned conversion; fmt does not.
var signFlags = strings.NewReplacer("+", "", " ", "")

// toUnsigned is C's (unsigned long) of x: through long for what long
// holds, directly from 2^63 up (a Go conversion saturates there).
func toUnsigned(x float64) uint64 {
	if x >= 1<<63 {
		return uint64(x)
	}
	return uint64(int64(x))
}

// pad appends s padded to the spec's width with spaces, in bytes (left
// aligned with the '-' flag).
func (sp formatSpec) pad(buf []byte, s string) []byte {
	n := sp.width - len(s)
	if n <= 0 {
		return append(buf, s...)
	}
	if strings.IndexByte(sp.flags, '-') >= 0 {
		buf = append(buf, s...)
		return append(buf, strings.Repeat(" ", n)...)
	}
	buf = append(buf, strings.Repeat(" ", n)...)
	return append(buf, s...)
}

// cNonFinite is how C's printf writes an infinity or a NaN (glibc: the
// sign of a NaN too, and 0/0 is negative on x86).
func cNonFinite(x float64, sp formatSpec) string {
	s := "inf"
	if math.IsNaN(x) {
		s = "nan"
	}
	switch {
	case math.Signbit(x):
		s = "-" + s
	case strings.IndexByte(sp.flags, '+') >= 0:
		s = "+" + s
	case strings.IndexByte(sp.flags, ' ') >= 0:
		s = " " + s
	}
	if sp.conv == 'E' || sp.conv == 'G' {
		s = strings.ToUpper(s)
	}
	return s
}

// appendQuoted is 5.1's %q: a string Lua reads back.
func appendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			buf = append(buf, '\\', c)
		case '\r':
			buf = append(buf, `\r`...)
		case 0:
			buf = append(buf, `\000`...)
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}
