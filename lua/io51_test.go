// The io library's reads and errors as Lua 5.1's (liolib.c on glibc),
// found running real programs: each expected output is lua5.1's.
package lua

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ioFixture writes the files the io cases read into a temporary
// directory and returns the Lua prelude naming them: long (a 10,000-byte
// line, "short", a 70,000-byte line without a newline), crlf ("a\r\nb\r\n
// \r\nlast"), nums ("  12 0x1F -3.5e2 x7"), missing (a path that does not
// exist) and dir (a directory).
func ioFixture(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	files := map[string]string{
		"long.txt": strings.Repeat("x", 10000) + "\nshort\n" + strings.Repeat("y", 70000),
		"crlf.txt": "a\r\nb\r\n\r\nlast",
		"nums.txt": "  12 0x1F -3.5e2 x7",
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(d, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(d, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "local D = " + quoteLua(d+"/") + " local long, crlf, nums = D .. 'long.txt', D .. 'crlf.txt', D .. 'nums.txt' " +
		"local missing, dir = D .. 'missing.lua', D .. 'dir' local function rel(s) return (tostring(s):gsub(D, '')) end\n"
}

func quoteLua(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// Lines are read whole, however long (io.lines and file:lines cut them
// every 4,096 bytes), and keep a '\r' before the '\n' (it was dropped).
func TestIOLinesAs51(t *testing.T) {
	pre := ioFixture(t)
	check51(t, [][2]string{
		{pre + `local t = {} for l in io.lines(long) do t[#t+1] = #l end print(table.concat(t, " "))`, "10000 5 70000"},
		{pre + `local t = {} local f = io.open(long) for l in f:lines() do t[#t+1] = #l end f:close() print(table.concat(t, " "))`, "10000 5 70000"},
		{pre + `local f = io.open(long) print(#f:read("*l"), f:read("*l"), #f:read("*l"), f:read("*l")) f:close()`, "10000\tshort\t70000\tnil"},
		{pre + `local t = {} for l in io.lines(crlf) do t[#t+1] = string.format("%q", l) end print(table.concat(t, " "))`, `"a\r" "b\r" "\r" "last"`},
		{pre + `local t = {} local f = io.open(crlf) for l in f:lines() do t[#t+1] = string.format("%q", l) end f:close() print(table.concat(t, " "))`, `"a\r" "b\r" "\r" "last"`},
		{pre + `local f = io.open(crlf) print(string.format("%q %q", f:read("*l"), f:read("*line"))) f:close()`, `"a\r" "b\r"`},
	})
}

// A read stops at the first format that fails, which gives nil ("*n"
// where no number is: it was a Go strconv error, and the values read
// before it were lost).
func TestIOReadNumbersAs51(t *testing.T) {
	pre := ioFixture(t)
	check51(t, [][2]string{
		{pre + `local f = io.open(crlf) print(f:read("*l", "*n", 3, "*a")) f:close()`, "a\r\tnil"},
		{pre + `local f = io.open(nums) print(f:read("*n", "*n", "*n", "*n")) print(f:read("*a")) f:close()`, "12\t31\t-350\tnil\nx7"},
		{pre + `local f = io.open(nums) print(f:read("*n", 2, "*n")) f:close()`, "12\t 0\tnil"},
		{pre + `for _, s in ipairs{"  12 ", "-0x1p4", "1e", "1e+", ".5", "5.", ".", "-", "inf", "-nan", "0x", "0x.8", "1.5e3x", "12abc"} do
  local f = io.open(D .. "num.txt", "w") f:write(s) f:close()
  f = io.open(D .. "num.txt") local v = f:read("*n") print(string.format("%q", s), v, string.format("%q", f:read("*a") or "nil")) f:close()
end`, strings.Join([]string{`"  12 "	12	" "`, `"-0x1p4"	-16	""`, `"1e"	1	""`, `"1e+"	1	""`, `".5"	0.5	""`, `"5."	5	""`,
			`"."	nil	""`, `"-"	nil	""`, `"inf"	inf	""`, `"-nan"	-nan	""`, `"0x"	nil	""`, `"0x.8"	0.5	""`, `"1.5e3x"	1500	"x"`, `"12abc"	12	"abc"`}, "\n")},
		{pre + `local f = io.open(crlf) print(pcall(function() return f:read("x") end)) print(pcall(function() return f:read("*z") end)) f:close()`,
			"false\t<string>:2: bad argument #1 to 'read' (invalid option)\nfalse\t<string>:2: bad argument #1 to 'read' (invalid format)"},
	})
}

// Failures to open are 5.1's "path: strerror" with the errno; io.lines
// raises it as an argument error (it returned nothing); loadfile and
// dofile say "cannot open/read path: strerror".
func TestIOErrorsAs51(t *testing.T) {
	pre := ioFixture(t)
	check51(t, [][2]string{
		{pre + `local f, m, n = io.open(missing) print(f, rel(m), n)`, "nil\tmissing.lua: No such file or directory\t2"},
		{pre + `local f, m, n = io.open(dir .. "/x/y", "w") print(f, rel(m), n)`, "nil\tdir/x/y: No such file or directory\t2"},
		{pre + `local f, m, n = io.open(dir, "w") print(f, rel(m), n)`, "nil\tdir: Is a directory\t21"},
		{pre + `local ok, m = pcall(io.lines, missing) print(ok, rel(m))`, "false\tbad argument #1 to '?' (missing.lua: No such file or directory)"},
		{pre + `local f, m = loadfile(missing) print(f, rel(m))`, "nil\tcannot open missing.lua: No such file or directory"},
		{pre + `local ok, m = pcall(dofile, missing) print(ok, rel(m))`, "false\tcannot open missing.lua: No such file or directory"},
		{pre + `local f, m = loadfile(dir) print(f, rel(m))`, "nil\tcannot read dir: Is a directory"},
	})
}
