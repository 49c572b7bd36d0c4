package lua

// os.date as Lua 5.1's os_date on glibc in the C locale (Lua never calls
// setlocale): each "%x" of the format goes to C's strftime on its own
// (Lua passes "%" and one character), so the conversions are glibc's and
// anything else comes out as written ("%E", "%O", "%Q" as "%E"...; "%3"
// as " %3": glibc reads a field width and pads the unknown conversion).
// A "%" at the end is itself; the format ends at its first NUL byte, as
// 5.1's loop over a C string does. The time is the number truncated to
// time_t; a NaN, an infinity or a time whose year does not fit C's int
// (gmtime/localtime fail) answers nil.

import (
	"math"
	"strconv"
	"strings"
	"time"
)

var (
	weekdayNames = [7]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	monthNames   = [12]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
)

func osDate(L *LState) int {
	format := "%c"
	if L.Get(1) != LNil {
		format = L.CheckString(1)
	}
	t, ok := dateTime(L)
	utc := strings.HasPrefix(format, "!")
	if utc {
		format = format[1:]
		t = t.UTC()
	}
	switch {
	case !ok || !tmYearFits(t.Year()):
		L.Push(LNil)
	case format == "*t":
		L.Push(dateTable(L, t))
	default:
		L.Push(LString(strftime(t, format, utc)))
	}
	return 1
}

// dateTime is os.date's second argument (default now), as a local time,
// or false where C's (time_t) conversion of the number has no meaning.
func dateTime(L *LState) (time.Time, bool) {
	if L.Get(2) == LNil {
		return time.Now(), true
	}
	f := float64(L.CheckNumber(2))
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

// tmYearFits reports whether year-1900 fits a C int (struct tm's tm_year).
func tmYearFits(year int) bool {
	y := int64(year) - 1900
	return y >= math.MinInt32 && y <= math.MaxInt32
}

// dateTable is os.date("*t"): the nine fields of 5.1's table.
func dateTable(L *LState, t time.Time) *LTable {
	tb := L.CreateTable(0, 9)
	tb.RawSetString("sec", LNumber(t.Second()))
	tb.RawSetString("min", LNumber(t.Minute()))
	tb.RawSetString("hour", LNumber(t.Hour()))
	tb.RawSetString("day", LNumber(t.Day()))
	tb.RawSetString("month", LNumber(t.Month()))
	tb.RawSetString("year", LNumber(t.Year()))
	tb.RawSetString("wday", LNumber(t.Weekday()+1))
	tb.RawSetString("yday", LNumber(t.YearDay()))
	tb.RawSetString("isdst", LBool(t.IsDST()))
	return tb
}

// strftime formats t as os_date's loop does: one strftime call per
// conversion. utc tells a gmtime time (its zone is "GMT", as glibc's).
func strftime(t time.Time, format string, utc bool) string {
	if i := strings.IndexByte(format, 0); i >= 0 {
		format = format[:i]
	}
	b := make([]byte, 0, len(format)+16)
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b = append(b, format[i])
			continue
		}
		i++
		b = appendConversion(b, t, format[i], utc)
	}
	return string(b)
}

// appendConversion appends glibc's strftime("%c") for conversion c.
func appendConversion(b []byte, t time.Time, c byte, utc bool) []byte {
	switch c {
	case 'a':
		return append(b, weekdayNames[t.Weekday()][:3]...)
	case 'A':
		return append(b, weekdayNames[t.Weekday()]...)
	case 'b', 'h':
		return append(b, monthNames[t.Month()-1][:3]...)
	case 'B':
		return append(b, monthNames[t.Month()-1]...)
	case 'c':
		return appendFormat(b, t, "%a %b %e %H:%M:%S %Y", utc)
	case 'C':
		return strconv.AppendInt(b, floorDiv(int64(t.Year()), 100), 10)
	case 'd':
		return pad(b, t.Day(), 2, '0')
	case 'D', 'x':
		return appendFormat(b, t, "%m/%d/%y", utc)
	case 'e':
		return pad(b, t.Day(), 2, ' ')
	case 'F':
		return appendFormat(b, t, "%Y-%m-%d", utc)
	case 'g':
		y, _ := t.ISOWeek()
		return pad(b, int(floorMod(int64(y), 100)), 2, '0')
	case 'G':
		y, _ := t.ISOWeek()
		return strconv.AppendInt(b, int64(y), 10)
	case 'H':
		return pad(b, t.Hour(), 2, '0')
	case 'I':
		return pad(b, hour12(t), 2, '0')
	case 'j':
		return pad(b, t.YearDay(), 3, '0')
	case 'k':
		return pad(b, t.Hour(), 2, ' ')
	case 'l':
		return pad(b, hour12(t), 2, ' ')
	case 'm':
		return pad(b, int(t.Month()), 2, '0')
	case 'M':
		return pad(b, t.Minute(), 2, '0')
	case 'n':
		return append(b, '\n')
	case 'p':
		return append(b, ampm(t)...)
	case 'P':
		return append(b, strings.ToLower(ampm(t))...)
	case 'r':
		return appendFormat(b, t, "%I:%M:%S %p", utc)
	case 'R':
		return appendFormat(b, t, "%H:%M", utc)
	case 's':
		return strconv.AppendInt(b, mktime(t), 10)
	case 'S':
		return pad(b, t.Second(), 2, '0')
	case 't':
		return append(b, '\t')
	case 'T', 'X':
		return appendFormat(b, t, "%H:%M:%S", utc)
	case 'u':
		return strconv.AppendInt(b, int64((t.Weekday()+6)%7+1), 10)
	case 'U':
		return pad(b, (t.YearDay()-1+7-int(t.Weekday()))/7, 2, '0')
	case 'V':
		_, w := t.ISOWeek()
		return pad(b, w, 2, '0')
	case 'w':
		return strconv.AppendInt(b, int64(t.Weekday()), 10)
	case 'W':
		return pad(b, (t.YearDay()-1+7-(int(t.Weekday())+6)%7)/7, 2, '0')
	case 'y':
		return pad(b, int(floorMod(int64(t.Year()), 100)), 2, '0')
	case 'Y':
		return strconv.AppendInt(b, int64(t.Year()), 10)
	case 'z':
		return appendOffset(b, t)
	case 'Z':
		return append(b, zoneName(t, utc)...)
	case '%':
		return append(b, '%')
	}
	return appendUnknown(b, c)
}

// appendUnknown is what glibc writes for "%c" that is no conversion: the
// two characters, padded with spaces to the width a digit 1-9 gives.
func appendUnknown(b []byte, c byte) []byte {
	if c >= '3' && c <= '9' {
		for range int(c-'0') - 2 {
			b = append(b, ' ')
		}
	}
	return append(b, '%', c)
}

// appendFormat appends the conversions of a composite one (%c, %D...).
func appendFormat(b []byte, t time.Time, format string, utc bool) []byte {
	for i := 0; i < len(format); i++ {
		if format[i] == '%' {
			i++
			b = appendConversion(b, t, format[i], utc)
		} else {
			b = append(b, format[i])
		}
	}
	return b
}

// pad appends n in decimal, at least width wide, padded with fill.
func pad(b []byte, n, width int, fill byte) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, fill)
	}
	return append(b, s...)
}

func hour12(t time.Time) int {
	if h := t.Hour() % 12; h != 0 {
		return h
	}
	return 12
}

func ampm(t time.Time) string {
	if t.Hour() < 12 {
		return "AM"
	}
	return "PM"
}

// mktime is glibc's %s: the broken-down time read back as a local time
// (for a gmtime one, that shifts it by the local offset, as in C).
func mktime(t time.Time) int64 {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.Local).Unix()
}

// appendOffset is %z: +hhmm east of UTC.
func appendOffset(b []byte, t time.Time) []byte {
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b = append(b, sign)
	return pad(b, off/3600*100+off%3600/60, 4, '0')
}

// zoneName is %Z: the zone's abbreviation; a gmtime time's is "GMT".
func zoneName(t time.Time, utc bool) string {
	if utc {
		return "GMT"
	}
	name, _ := t.Zone()
	return name
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
