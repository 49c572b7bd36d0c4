package parse

// number.go: Lua 5.1's luaO_str2d, the conversion both the lexer (is a
// numeral malformed?) and the runtime (tonumber, coercions, the
// compiler's constants) use (luarun).

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// luaSpace is C's isspace in the C locale: what Lua 5.1 skips around a
// number in a string.
const luaSpace = " \t\n\v\f\r"

// ParseNumber converts a string as Lua 5.1's luaO_str2d does: white space
// around it, then what C's strtod reads (decimal with an exponent, inf,
// nan, C99 hex floats, which cover 0x integers of any length); ok is
// false for anything else. luarun: gopher-lua took Go's syntax, reading
// "010" as octal 8 and accepting "0b11" and "1_0", and refused "1e2" in
// tonumber.
func ParseNumber(number string) (f float64, ok bool) {
	s := strings.Trim(number, luaSpace)
	if s == "" || strings.ContainsRune(s, '_') {
		return 0, false
	}
	body := s
	if body[0] == '-' || body[0] == '+' {
		body = body[1:]
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') && !strings.ContainsAny(body, "pP") {
		s += "p0" // a C hex float may leave out its exponent; Go's may not
	}
	if strings.HasPrefix(body, "0b") || strings.HasPrefix(body, "0B") || strings.HasPrefix(body, "0o") || strings.HasPrefix(body, "0O") {
		return 0, false // Go's prefixes, not C's
	}
	if isCNaN(body) { // strtod's signed nan and nan(chars); Go reads neither
		f := math.NaN()
		if s[0] == '-' {
			f = math.Copysign(f, -1)
		}
		return f, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: strtod's HUGE_VAL or 0
		return 0, false
	}
	return f, true
}

// isCNaN: s is a NaN as C's strtod reads it after the sign: "nan" in any
// case, maybe followed by a parenthesized run of letters, digits and _.
func isCNaN(s string) bool {
	if len(s) < 3 || !strings.EqualFold(s[:3], "nan") {
		return false
	}
	rest := s[3:]
	if rest == "" {
		return true
	}
	if len(rest) < 2 || rest[0] != '(' || rest[len(rest)-1] != ')' {
		return false
	}
	for _, c := range rest[1 : len(rest)-1] {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
