package luaproc

// Log lines a script cannot forge. What a script passes to log.* (the
// message, each key and each value, a table as logrender.go writes it)
// and the error text of a crash report go through logText: a control
// character (a newline, a carriage return, an escape sequence; a tab stays) and the
// Unicode line and paragraph separators are written escaped, as \n, \r,
// \x1b, \u2028, so one call writes one line whatever the format (text,
// logfmt or JSON, which would escape them again: "a\\nb"). A backslash
// is left as it is.
//
// A key a script passes cannot stand for a field the logger writes
// itself (time, level, msg, pid, prefix, caller): a key that is one of
// those after any leading underscores gets one more, so "pid" is written
// "_pid", "_pid" "__pid", and no two keys a script passes collide.

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// reservedLogKeys are the keys of the fields the logger writes itself.
var reservedLogKeys = map[string]bool{"time": true, "level": true, "msg": true, "pid": true, "prefix": true, "caller": true}

// logKey is the key a script passed, as it is written.
func logKey(k string) string {
	k = logText(k)
	if reservedLogKeys[strings.TrimLeft(k, "_")] {
		return "_" + k
	}
	return k
}

// logText is s with line-breaking and control characters escaped.
func logText(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && isInvalidAt(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isInvalidAt reports whether s holds an invalid UTF-8 byte at i (rather
// than an encoded U+FFFD), which logText writes as \xHH.
func isInvalidAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 1
}

// needsEscape reports whether s holds anything logText changes: a byte
// below 0x20 but tab, DEL, or (past ASCII) invalid UTF-8, a C1 control
// or a line or paragraph separator.
func needsEscape(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
		ascii = ascii && c < 0x80
	}
	return !ascii && (!utf8.ValidString(s) || strings.ContainsAny(s, "\u2028\u2029") || hasC1(s))
}

// hasC1 reports whether s (valid UTF-8) holds a C1 control (U+0080 to
// U+009F, NEL among them).
func hasC1(s string) bool {
	for _, r := range s {
		if r >= 0x80 && r < 0xa0 {
			return true
		}
	}
	return false
}
