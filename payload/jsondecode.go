package payload

// JSON decoding: one pass over the text that builds the values directly
// (no json.Number, no second walk), on the caller's goroutine, calling a
// stop hook often enough that a caller who must stop (a killed process)
// stops within about a millisecond of work.
//
// Invariants:
//   - It accepts exactly what encoding/json's json.Valid accepts (RFC 8259,
//     nesting at most MaxJSONDepth deep), which FuzzDecodeJSON checks, and
//     its values are those the encoding/json-based decoder it replaced
//     gave (FuzzDecodeJSONLikeEncodingJSON).
//   - Arrays and objects are read with an explicit stack (d.open), never
//     by recursion: hostile nesting costs heap in proportion to its
//     length, not Go stack.
//   - The elements of every open array and the members of every open
//     object are kept in one scratch stack (d.vals, d.keys); closing one
//     copies its elements out into a slice or map of the exact size.

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxJSONDepth is how deeply arrays and objects may nest in a text Decode
// reads: encoding/json's bound (json.Valid refuses deeper texts), far
// past what data needs.
const MaxJSONDepth = 10000

// stopEvery is how many units of work pass between two calls of a stop
// hook: a unit is a value, or 64 bytes of a string or of white space
// (about 50 ns of work each, so some 50 microseconds between calls, on
// an idle machine; the hook, an atomic load, costs nothing beside).
const stopEvery = 1024

// scanChunk is how many bytes of one string or white-space run are
// scanned between two counts of work (scanChunk/64 units).
const scanChunk = 4096

// Decode parses JSON into a Value: objects become map[string]any, arrays
// []any, numbers int64 when they are written as integers that fit (but
// -0) and float64 otherwise (±Inf beyond float64's range), strings
// string (invalid UTF-8 and lone surrogates become U+FFFD), null nil. A
// key repeated in an object keeps its last value. It accepts exactly
// what json.Valid does: one value, white space around it, nesting at most
// MaxJSONDepth deep. An error says what was expected and where: "decode
// JSON: invalid character '}' looking for beginning of object key string
// at line 1, column 9 (byte 9)".
func Decode(data []byte) (any, error) {
	return DecodeStop(data, nil)
}

// DecodeStop is Decode that calls stop (when not nil) every thousand
// values or so, and every 64 KB or less of a long string or white-space
// run (some 50 µs of work apart on an idle machine), and returns stop's
// error, as it is, as soon as stop returns one. stop runs on the
// caller's goroutine; it may also panic (a Lua error raised there
// unwinds through DecodeStop, which holds nothing that needs releasing).
// data is only read, and not kept: it may be a string's bytes.
func DecodeStop(data []byte, stop func() error) (any, error) {
	d := decoder{data: data, stop: stop, budget: stopEvery}
	v, err := d.decode()
	if err != nil {
		return nil, err
	}
	if err := d.skipSpace(); err != nil {
		return nil, err
	}
	if d.pos < len(data) {
		return nil, d.errorAt(d.pos, "data after the first value")
	}
	return v, nil
}

// decoder is the state of one DecodeStop.
type decoder struct {
	data   []byte
	pos    int // the next byte to read
	stop   func() error
	budget int // units of work left before the next call of stop

	open []openValue // the arrays and objects being read, innermost last
	vals []any       // the elements (or member values) read so far of each open one
	keys []string    // the member keys read so far of each open object
	buf  []byte      // a string with escapes, being unquoted

	interned map[string]string // short keys met, each allocated once (keyStr)
}

// openValue is an array or object being read: its elements so far are
// d.vals[vals:], its keys (an object's) d.keys[keys:].
type openValue struct {
	object     bool
	vals, keys int
}

// work counts n units of work, calling the stop hook when the budget is
// spent.
func (d *decoder) work(n int) error {
	d.budget -= n
	if d.budget >= 0 {
		return nil
	}
	d.budget = stopEvery
	if d.stop == nil {
		return nil
	}
	return d.stop()
}

// decode reads one value and returns it.
func (d *decoder) decode() (any, error) {
	for {
		v, opened, err := d.begin()
		if err != nil {
			return nil, err
		}
		if opened {
			continue // its first element (or member value) comes next
		}
		// v is complete: it is an element of the innermost open value,
		// which may end here, and so may the one holding it, and so on.
		for len(d.open) > 0 {
			d.vals = append(d.vals, v)
			more, err := d.next()
			if err != nil {
				return nil, err
			}
			if more {
				break
			}
			if v, err = d.close(); err != nil {
				return nil, err
			}
		}
		if len(d.open) == 0 {
			return v, nil
		}
	}
}

// begin reads the start of a value: a scalar or an empty array or object
// whole (opened false), or the start of an array or object, which it
// pushes on d.open (opened true; an object's first key is read too).
func (d *decoder) begin() (v any, opened bool, err error) {
	if err := d.work(1); err != nil {
		return nil, false, err
	}
	if err := d.skipSpace(); err != nil {
		return nil, false, err
	}
	if d.pos >= len(d.data) {
		return nil, false, d.endError("looking for beginning of value")
	}
	switch c := d.data[d.pos]; c {
	case '[', '{':
		return d.openValue(c == '{')
	case '"':
		s, err := d.str()
		return s, false, err
	case 't':
		return true, false, d.literal("true")
	case 'f':
		return false, false, d.literal("false")
	case 'n':
		return nil, false, d.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			v, err := d.number()
			return v, false, err
		}
		return nil, false, d.charError(d.pos, "looking for beginning of value")
	}
}

// openValue reads the '[' or '{' at d.pos and what follows it up to its
// first element: an empty array or object is returned whole.
func (d *decoder) openValue(object bool) (any, bool, error) {
	if len(d.open) >= MaxJSONDepth {
		return nil, false, d.errorAt(d.pos, fmt.Sprintf("arrays and objects nested deeper than %d", MaxJSONDepth))
	}
	d.pos++
	if err := d.skipSpace(); err != nil {
		return nil, false, err
	}
	switch {
	case !object && d.pos < len(d.data) && d.data[d.pos] == ']':
		d.pos++
		return []any{}, false, nil
	case object && d.pos < len(d.data) && d.data[d.pos] == '}':
		d.pos++
		return map[string]any{}, false, nil
	}
	d.open = append(d.open, openValue{object: object, vals: len(d.vals), keys: len(d.keys)})
	if object {
		return nil, true, d.key()
	}
	return nil, true, nil
}

// key reads an object's member key and the ':' after it.
func (d *decoder) key() error {
	if err := d.skipSpace(); err != nil {
		return err
	}
	if d.pos >= len(d.data) {
		return d.endError("looking for beginning of object key string")
	}
	if d.data[d.pos] != '"' {
		return d.charError(d.pos, "looking for beginning of object key string")
	}
	k, err := d.keyStr()
	if err != nil {
		return err
	}
	d.keys = append(d.keys, k)
	if err := d.skipSpace(); err != nil {
		return err
	}
	if d.pos >= len(d.data) {
		return d.endError("after object key")
	}
	if d.data[d.pos] != ':' {
		return d.charError(d.pos, "after object key")
	}
	d.pos++
	return nil
}

// next reads what follows an element of the innermost open value: a ','
// (and the next member's key, in an object), more is true; or its
// closing bracket, more is false.
func (d *decoder) next() (more bool, err error) {
	object := d.open[len(d.open)-1].object
	where, end := "after array element", byte(']')
	if object {
		where, end = "after object key:value pair", '}'
	}
	if err := d.skipSpace(); err != nil {
		return false, err
	}
	if d.pos >= len(d.data) {
		return false, d.endError(where)
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		if object {
			return true, d.key()
		}
		return true, nil
	case end:
		d.pos++
		return false, nil
	}
	return false, d.charError(d.pos, where)
}

// closeChunk is how many elements close copies between two counts of
// work.
const closeChunk = 16384

// close pops the innermost open value and returns it, its elements
// copied out of the scratch stack.
func (d *decoder) close() (any, error) {
	o := d.open[len(d.open)-1]
	d.open = d.open[:len(d.open)-1]
	vals := d.vals[o.vals:]
	defer func() {
		clear(vals) // the scratch must not keep them alive
		d.vals, d.keys = d.vals[:o.vals], d.keys[:o.keys]
	}()
	if !o.object {
		list := make([]any, len(vals))
		for i := 0; i < len(vals); i += closeChunk {
			n := copy(list[i:], vals[i:min(len(vals), i+closeChunk)])
			if err := d.work(n / 32); err != nil { // a copy: about 1.5 ns an element
				return nil, err
			}
		}
		return list, nil
	}
	keys := d.keys[o.keys:]
	m := make(map[string]any, len(keys))
	for i, k := range keys {
		m[k] = vals[i] // a repeated key keeps its last value
		if i%1024 == 1023 {
			if err := d.work(1024); err != nil { // a map insertion: a unit
				return nil, err
			}
		}
	}
	return m, nil
}

// skipSpace moves d.pos past white space.
func (d *decoder) skipSpace() error {
	for {
		end := min(len(d.data), d.pos+scanChunk)
		i := d.pos
		for i < end && isSpace(d.data[i]) {
			i++
		}
		d.pos = i
		if i < end || i == len(d.data) {
			return nil
		}
		if err := d.work(scanChunk / 64); err != nil {
			return err
		}
	}
}

func isSpace(c byte) bool {
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\r' || c == '\n')
}

// literal reads word (true, false or null) at d.pos.
func (d *decoder) literal(word string) error {
	for i := 1; i < len(word); i++ {
		p := d.pos + i
		if p >= len(d.data) {
			return d.endError("in literal " + word)
		}
		if d.data[p] != word[i] {
			return d.charError(p, fmt.Sprintf("in literal %s (expecting %q)", word, word[i]))
		}
	}
	d.pos += len(word)
	return nil
}

// number reads the number at d.pos: an int64 when it is written as an
// integer that fits (but -0), else a float64.
func (d *decoder) number() (any, error) {
	start := d.pos
	neg := d.data[d.pos] == '-'
	if neg {
		d.pos++
	}
	digits, err := d.digits("in numeric literal", true)
	if err != nil {
		return nil, err
	}
	integer := true
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if _, err := d.digits("after decimal point in numeric literal", false); err != nil {
			return nil, err
		}
		integer = false
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if _, err := d.digits("in exponent of numeric literal", false); err != nil {
			return nil, err
		}
		integer = false
	}
	text := d.data[start:d.pos]
	if integer {
		if i, ok := parseInt(digits, neg); ok {
			return i, nil
		}
	}
	f, _ := strconv.ParseFloat(string(text), 64) // beyond float64: ±Inf
	return f, nil
}

// digits reads one or more decimal digits at d.pos (with leading, a
// number's integer part: one 0, or digits that do not start with 0).
func (d *decoder) digits(where string, leading bool) ([]byte, error) {
	start := d.pos
	if d.pos >= len(d.data) {
		return nil, d.endError(where)
	}
	if c := d.data[d.pos]; c < '0' || c > '9' {
		return nil, d.charError(d.pos, where)
	}
	d.pos++
	if leading && d.data[start] == '0' {
		return d.data[start:d.pos], nil
	}
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		d.pos++
	}
	return d.data[start:d.pos], nil
}

// parseInt is the int64 that digits (with a '-' before them when neg)
// write, if it fits and is not -0.
func parseInt(digits []byte, neg bool) (int64, bool) {
	if len(digits) > 18 { // may not fit: let strconv decide
		s := string(digits)
		if neg {
			s = "-" + s
		}
		i, err := strconv.ParseInt(s, 10, 64)
		return i, err == nil
	}
	var n int64
	for _, c := range digits {
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return 0, false // -0 is a float, Lua's -0
		}
		n = -n
	}
	return n, true
}

// plain[c] is true for the bytes a string holds as they are: printable
// ASCII but '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string whose opening quote is at d.pos.
func (d *decoder) str() (string, error) {
	start := d.pos + 1
	i, err := d.scanPlain(start)
	if err != nil {
		return "", err
	}
	if i < len(d.data) && d.data[i] == '"' {
		d.pos = i + 1
		return string(d.data[start:i]), nil
	}
	return d.strSlow(start, i)
}

// maxInterned is how many distinct keys a decoder keeps (keyStr), and
// maxInternedLen how long each may be.
const maxInterned, maxInternedLen = 1024, 32

// keyStr is str for an object key: a short plain key is interned, so
// that the same key in a thousand objects is one string, allocated once.
func (d *decoder) keyStr() (string, error) {
	start := d.pos + 1
	i, err := d.scanPlain(start)
	if err != nil {
		return "", err
	}
	if i < len(d.data) && d.data[i] == '"' && i-start <= maxInternedLen {
		d.pos = i + 1
		if k, ok := d.interned[string(d.data[start:i])]; ok { // no allocation
			return k, nil
		}
		k := string(d.data[start:i])
		if len(d.interned) < maxInterned {
			if d.interned == nil {
				d.interned = make(map[string]string)
			}
			d.interned[k] = k
		}
		return k, nil
	}
	return d.str()
}

// scanPlain returns the index of the first byte at or after i that is
// not plain (or len(d.data)).
func (d *decoder) scanPlain(i int) (int, error) {
	for {
		end := min(len(d.data), i+scanChunk)
		for i < end && plain[d.data[i]] {
			i++
		}
		if i < end || i == len(d.data) {
			return i, nil
		}
		if err := d.work(scanChunk / 64); err != nil {
			return 0, err
		}
	}
}

// strSlow reads the rest of a string with escapes, control characters
// (an error), non-ASCII bytes or no end: the string began at start, and
// the bytes up to i are plain.
func (d *decoder) strSlow(start, i int) (string, error) {
	buf := append(d.buf[:0], d.data[start:i]...)
	defer func() { d.buf = buf[:0] }()
	for n := 0; ; n++ {
		if n%scanChunk == scanChunk-1 { // 5 to 15 ns a turn
			if err := d.work(scanChunk / 4); err != nil {
				return "", err
			}
		}
		if i >= len(d.data) {
			return "", d.endError("in string literal")
		}
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return string(buf), nil
		case c == '\\':
			var err error
			if buf, i, err = d.escape(buf, i); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", d.charError(i, "in string literal")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				buf = utf8.AppendRune(buf, utf8.RuneError) // invalid UTF-8
			} else {
				buf = append(buf, d.data[i:i+size]...)
			}
			i += size
		}
	}
}

// escapes maps the byte after '\' to what it stands for (0: none).
var escapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape appends what the escape at i stands for to buf and returns the
// index past it. A \u escape of a surrogate pair is one rune; a lone
// surrogate is U+FFFD (as encoding/json).
func (d *decoder) escape(buf []byte, i int) ([]byte, int, error) {
	if i+1 >= len(d.data) {
		return nil, 0, d.endError("in string escape code")
	}
	c := d.data[i+1]
	if c != 'u' {
		if escapes[c] == 0 {
			return nil, 0, d.charError(i+1, "in string escape code")
		}
		return append(buf, escapes[c]), i + 2, nil
	}
	r, err := d.hex4(i + 2)
	if err != nil {
		return nil, 0, err
	}
	i += 6
	if utf16.IsSurrogate(r) {
		// a pair if a valid \u escape of the other half follows; the
		// escape after a lone one is read on its own
		if i+1 < len(d.data) && d.data[i] == '\\' && d.data[i+1] == 'u' {
			if r2, err := d.hex4(i + 2); err == nil {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					return utf8.AppendRune(buf, pair), i + 6, nil
				}
			}
		}
		r = utf8.RuneError
	}
	return utf8.AppendRune(buf, r), i, nil
}

// hex4 is the value of the four hex digits at i.
func (d *decoder) hex4(i int) (rune, error) {
	var r rune
	for j := i; j < i+4; j++ {
		if j >= len(d.data) {
			return 0, d.endError(`in \u hexadecimal character escape`)
		}
		c := d.data[j]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, d.charError(j, `in \u hexadecimal character escape`)
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// charError is the error of an unexpected byte at i.
func (d *decoder) charError(i int, where string) error {
	return d.errorAt(i, "invalid character "+quoteChar(d.data[i])+" "+where)
}

// endError is the error of a text that ends too soon.
func (d *decoder) endError(where string) error {
	if len(bytes.TrimLeft(d.data, jsonSpace)) == 0 {
		return d.errorAt(len(d.data), "no value: the text is empty")
	}
	return d.errorAt(len(d.data), "unexpected end of JSON input "+where)
}

// errorAt is a decoding error at byte i.
func (d *decoder) errorAt(i int, msg string) error {
	return fmt.Errorf("decode JSON: %s%s", msg, position(d.data, i))
}

// jsonSpace is the white space JSON allows around a value.
const jsonSpace = " \t\r\n"

// position is " at line L, column C (byte B)" of byte i of data (bytes
// count from 1, columns in bytes).
func position(data []byte, i int) string {
	i = max(0, min(i, len(data)))
	line := bytes.Count(data[:i], []byte("\n")) + 1
	col := i - bytes.LastIndexByte(data[:i], '\n')
	return fmt.Sprintf(" at line %d, column %d (byte %d)", line, col, i+1)
}

// quoteChar is c quoted for an error, as encoding/json does ('x', '"',
// '\n'), but a byte past ASCII is '\xff', not a rune.
func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c >= utf8.RuneSelf:
		return fmt.Sprintf(`'\x%02x'`, c)
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}
