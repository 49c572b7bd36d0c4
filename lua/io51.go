// Reads and error messages of the io library and loadfile as Lua 5.1's
// liolib.c and lauxlib.c write them on glibc: a line is read whole and
// keeps a '\r' before its '\n' (read_line), a number is what fscanf's
// "%lf" takes (read_number), and a failure is "path: strerror" with the
// errno (pushresult), "cannot open/read path: strerror" for loadfile
// (errfile).
package lua

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"syscall"
)

// readLine51 reads a line from r without its '\n' (a '\r' stays, as in
// 5.1); eof when nothing was left to read. A line is any length.
func readLine51(r *bufio.Reader) (line []byte, eof bool, err error) {
	b, err := r.ReadBytes('\n')
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1], false, nil
	}
	if err == io.EOF {
		return b, len(b) == 0, nil
	}
	return b, false, err
}

// numberPeek is how far readNumber51 looks ahead for a number's text.
const numberPeek = 256

// readNumber51 reads a number as 5.1's fscanf(f, "%lf") does: white
// space skipped, then the longest prefix that is a decimal or hexadecimal
// number (or inf/nan) consumed. ok is false where no number starts (what
// was skipped stays consumed, the rest is left, as scanf leaves it).
func readNumber51(r *bufio.Reader) (v LNumber, ok bool, err error) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				return 0, false, nil
			}
			return 0, false, err
		}
		if !isSpace51(c) {
			r.UnreadByte()
			break
		}
	}
	buf, err := r.Peek(numberPeek)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return 0, false, err
	}
	used, valid := scanFloat(buf)
	r.Discard(used)
	if valid == 0 {
		return 0, false, nil
	}
	text := strings.ToLower(string(buf[:valid]))
	if strings.Contains(text, "0x") && !strings.Contains(text, "p") {
		text += "p0" // Go wants a hexadecimal float's exponent
	}
	if strings.HasSuffix(text, "nan") { // Go reads no signed NaN
		f := math.NaN()
		if text[0] == '-' {
			f = math.Copysign(f, -1) // glibc's -nan
		}
		return LNumber(f), true, nil
	}
	f, perr := strconv.ParseFloat(text, 64)
	if perr != nil && !errors.Is(perr, strconv.ErrRange) {
		return 0, false, nil
	}
	return LNumber(f), true, nil
}

func isSpace51(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// scanFloat is how glibc's scanf("%lf") reads the start of b: used, the
// bytes it consumes (every byte that could still begin a number), and
// valid, the length of the number among them, 0 if none (then the read
// fails). A number is [sign] then inf, infinity, nan, 0x hex digits with
// an optional point and p exponent, or decimal digits with an optional
// point and e exponent; an exponent without digits is consumed, not used.
func scanFloat(b []byte) (used, valid int) {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	if i < len(b) && (b[i]|0x20 == 'i' || b[i]|0x20 == 'n') {
		return scanWord(b, i)
	}
	digit, exp := isDigit51, byte('e')
	if i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x' {
		i, digit, exp = i+2, isHexDigit51, 'p'
	}
	seen, dot := false, false
	for ; i < len(b); i++ {
		if digit(b[i]) {
			seen = true
		} else if b[i] == '.' && !dot {
			dot = true
		} else {
			break
		}
	}
	if !seen {
		return i, 0
	}
	valid = i
	if i < len(b) && b[i]|0x20 == exp {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && isDigit51(b[i]) {
			i++
		}
		if i > start {
			valid = i
		}
	}
	return i, valid
}

// scanWord reads inf, infinity or nan (any case) from b[i:]: what
// matches is consumed, a whole word is the number.
func scanWord(b []byte, i int) (used, valid int) {
	for _, w := range []string{"infinity", "inf", "nan"} {
		n := 0
		for n < len(w) && i+n < len(b) && b[i+n]|0x20 == w[n] {
			n++
		}
		if n == len(w) {
			return i + n, i + n
		}
		if w != "infinity" && n > used-i {
			used = i + n
		}
	}
	return max(used, i), 0
}

func isDigit51(c byte) bool    { return c >= '0' && c <= '9' }
func isHexDigit51(c byte) bool { return isDigit51(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

// cError is err as 5.1's pushresult writes a failure: glibc's strerror
// of its errno (Go's text of an errno is glibc's with a lower-case first
// letter), after "path: " when path is given, and the errno (1 when err
// carries none).
func cError(err error, path string) (string, LNumber) {
	msg, code := err.Error(), LNumber(1)
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg, code = strerror(errno), LNumber(errno)
	}
	if path != "" {
		msg = path + ": " + msg
	}
	return msg, code
}

func strerror(errno syscall.Errno) string {
	s := errno.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// fileLoadError is a file loadfile, dofile or LoadFile could not open or
// read, written as 5.1's errfile: "cannot open path: strerror".
type fileLoadError struct {
	what string // "open" or "read"
	path string
	err  error
}

func (e *fileLoadError) Error() string {
	msg, _ := cError(e.err, "")
	return fmt.Sprintf("cannot %s %s: %s", e.what, e.path, msg)
}

func (e *fileLoadError) Unwrap() error { return e.err }
