package payload

// JSON encoding, on the caller's goroutine, with a stop hook as
// DecodeStop's. Its output is what encoding/json writes for the same
// values (strings HTML-escaped, floats in ES6 form), which the tests
// check against encoding/json; objects' keys are sorted, so output is
// stable.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Encode returns the JSON form of v. Lists become arrays, maps objects (a
// map[any]any's keys are written as strings: 1 → "1", true → "true"), []byte
// a string of its bytes (invalid UTF-8 is replaced, as encoding/json does).
// NaN and infinities are refused, as JSON has no spelling for them, and so
// is nesting deeper than 200 (a cycle, most likely).
func Encode(v any) ([]byte, error) {
	return EncodeStop(v, nil)
}

// EncodeStop is Encode that calls stop (when not nil) every thousand
// values or so, every 16 KB of a long string and every thousand key
// comparisons of a big object's sort, and returns stop's error, as it
// is, as soon as stop returns one (as DecodeStop).
func EncodeStop(v any, stop func() error) ([]byte, error) {
	e := encoder{stop: stop, budget: stopEvery}
	if err := e.value(v, 0); err != nil {
		return nil, valueError("value", err) // a refusal gets its path
	}
	return e.buf, nil
}

const maxDepth = 200

// encoder is the state of one EncodeStop.
type encoder struct {
	buf    []byte
	stop   func() error
	budget int // units of work left before the next call of stop (stopEvery)
}

// work counts n units of work, calling the stop hook when the budget is
// spent (decoder.work).
func (e *encoder) work(n int) error {
	e.budget -= n
	if e.budget >= 0 {
		return nil
	}
	e.budget = stopEvery
	if e.stop == nil {
		return nil
	}
	return e.stop()
}

func (e *encoder) value(v any, depth int) error {
	if depth > maxDepth {
		return refuse("nested deeper than %d (a cycle?)", maxDepth)
	}
	if err := e.work(1); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil, null:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return refuse("%v cannot be encoded as JSON", x)
		}
		e.buf = appendFloat(e.buf, x)
	case string:
		return e.string(x)
	case []byte:
		return e.string(string(x))
	case []any:
		return e.list(x, depth)
	case map[string]any:
		return e.stringMap(x, depth)
	case map[any]any:
		return e.anyMap(x, depth)
	default:
		return refuse("%T cannot be encoded as JSON", v)
	}
	return nil
}

func (e *encoder) list(x []any, depth int) error {
	e.buf = append(e.buf, '[')
	for i, v := range x {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(v, depth+1); err != nil {
			return at(err, indexStep(i))
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) stringMap(x map[string]any, depth int) error {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	if err := sortWork(e, keys, strings.Compare); err != nil {
		return err
	}
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if err := e.member(i, k, x[k], depth); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) anyMap(x map[any]any, depth int) error {
	if err := checkObjectKeys(x); err != nil {
		return err
	}
	type member struct {
		k string
		v any
	}
	members := make([]member, 0, len(x))
	for k, v := range x {
		members = append(members, member{fmt.Sprint(k), v})
	}
	err := sortWork(e, members, func(a, b member) int { return strings.Compare(a.k, b.k) })
	if err != nil {
		return err
	}
	e.buf = append(e.buf, '{')
	for i, m := range members {
		if err := e.member(i, m.k, m.v, depth); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// member writes an object's i-th member.
func (e *encoder) member(i int, k string, v any, depth int) error {
	if i > 0 {
		e.buf = append(e.buf, ',')
	}
	if err := e.string(k); err != nil {
		return err
	}
	e.buf = append(e.buf, ':')
	if err := e.value(v, depth+1); err != nil {
		return at(err, keyStep(k))
	}
	return nil
}

// sortStopped carries the stop hook's error out of a sort.
type sortStopped struct{ err error }

// sortWork sorts s by cmp for e, counting each comparison as a unit of
// work: the stop hook's error ends the sort early (a million keys take
// a few hundred milliseconds to sort).
func sortWork[T any](e *encoder, s []T, cmp func(a, b T) int) (err error) {
	if e.stop == nil {
		slices.SortFunc(s, cmp)
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			stopped, ok := r.(sortStopped)
			if !ok {
				panic(r)
			}
			err = stopped.err
		}
	}()
	slices.SortFunc(s, func(a, b T) int {
		if err := e.work(1); err != nil {
			panic(sortStopped{err})
		}
		return cmp(a, b)
	})
	return nil
}

// checkObjectKeys checks that the keys of m can be written as the keys of
// one object: each a valid key, and no two written as the same string
// (1 and "1", true and "true"), which would make a duplicate key whose
// value a reader picks at will.
func checkObjectKeys(m map[any]any) error {
	seen := make(map[string]any, len(m))
	for k := range m {
		switch x := k.(type) {
		case bool, int64, string:
		case float64:
			if math.IsNaN(x) {
				return refuse("NaN cannot be a key")
			}
		default:
			return refuse("key of type %T cannot be sent", k)
		}
		s := fmt.Sprint(k)
		if other, dup := seen[s]; dup {
			a, b := keyText(k), keyText(other)
			if a > b {
				a, b = b, a // the same message whatever the map's order
			}
			return refuse("keys %s and %s would both be written as the object key %q", a, b, s)
		}
		seen[s] = k
	}
	return nil
}

// keyText is k as a Lua programmer would write it: "1" for a string, 1
// for a number.
func keyText(k any) string {
	if s, ok := k.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(k)
}

// appendFloat appends f as encoding/json writes it (ES6's number to
// string: like %g, with other exponent cutoffs and no padded exponent).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// htmlSafe[c] is true for the ASCII bytes a string is written with as
// they are: printable, but not '"', '\\', '<', '>', '&' (escaped as
// encoding/json does, for JSON that ends up in HTML).
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = !strings.ContainsRune("\"\\<>&", rune(c))
	}
	return t
}()

// string writes s quoted, as encoding/json does: invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped.
func (e *encoder) string(s string) error {
	b := append(e.buf, '"')
	start, check := 0, scanChunk
	for i := 0; i < len(s); {
		if i >= check { // a long string: count its work (1 to 5 ns a byte)
			if err := e.work(scanChunk / 16); err != nil {
				return err
			}
			check = i + scanChunk
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	e.buf = append(b, '"')
	return nil
}

// appendEscape appends the escape of ASCII byte c.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
