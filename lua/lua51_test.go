package lua

import (
	"bytes"
	"strings"
	"testing"
)

// run51 runs src in a fresh state and returns what it printed (print
// writes through tostring, as 5.1's does) or the error it raised.
func run51(t *testing.T, src string) string {
	t.Helper()
	L := NewState()
	defer L.Close()
	var out bytes.Buffer
	L.SetGlobal("print", L.NewFunction(func(L *LState) int {
		for i := 1; i <= L.GetTop(); i++ {
			if i > 1 {
				out.WriteByte('\t')
			}
			out.WriteString(L.ToStringMeta(L.Get(i)).String())
		}
		out.WriteByte('\n')
		return 0
	}))
	if err := L.DoString(src); err != nil {
		if ae, ok := err.(*ApiError); ok {
			out.WriteString("error: " + ae.Object.String())
		} else {
			out.WriteString("error: " + err.Error())
		}
	}
	return out.String()
}

func check51(t *testing.T, cases [][2]string) {
	t.Helper()
	for _, c := range cases {
		if got := strings.TrimSuffix(run51(t, c[0]), "\n"); got != c[1] {
			t.Errorf("%s\n got: %q\nwant: %q", c[0], got, c[1])
		}
	}
}

// The outputs are lua5.1's on x86-64 Linux (glibc).
func TestNumbersPrintAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(0.1 + 0.2, 1e15, 2^53, 3, 100, 1e14, 1e-5, -2.5, 2^31)`,
			"0.3\t1e+15\t9.007199254741e+15\t3\t100\t1e+14\t1e-05\t-2.5\t2147483648"},
		{`print(123456789012345, 1e100, 2^63, -2^63, 1/3, 5e-324)`,
			"1.2345678901234e+14\t1e+100\t9.2233720368548e+18\t-9.2233720368548e+18\t0.33333333333333\t4.9406564584125e-324"},
		{`local z = 0 print(1/z, -1/z, z/z, -(z/z), math.huge, -math.huge)`,
			"inf\t-inf\t-nan\tnan\tinf\t-inf"},
		{`print(math.huge == 1/0, math.huge > 1e308)`, "true\ttrue"},
		{`local z = -1e-200 local y = z * 1e-200 print(y, tostring(y), y .. "", -0)`, "-0\t-0\t-0\t-0"},
		{`print(tostring(0.1 + 0.2), (0.1 + 0.2) .. "|" .. 1e15, 1/0 .. "")`, "0.3\t0.3|1e+15\tinf"},
		{`print(string.format("%s %s %5s|%-5s|", 0.1 + 0.2, 1/0, 1/0, -1/0))`, "0.3 inf   inf|-inf |"},
		{`print(string.format("%g %f %e %.2f %5.1g|%-6f|%+f|%G", 0/0, -(0/0), 1/0, -1/0, 0/0, 1/0, 1/0, 1/0))`,
			"-nan nan inf -inf  -nan|inf   |+inf|INF"},
		{`print(string.format("%g %g %10.3g|", 0.1 + 0.2, 1e20, 2/3))`, "0.3 1e+20      0.667|"},
		{`print(tonumber("0.3") == 0.3, tonumber("1e+15") == 1e15, tonumber("inf"), tonumber("-nan") ~= tonumber("-nan"), tonumber("-nan"), tonumber("nan(1)"))`,
			"true\ttrue\tinf\ttrue\t-nan\tnan"},
	})
}

func TestArgErrorsAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(select(2, pcall(string.rep, {}, 2)):match("bad.*"))`, "bad argument #1 to '?' (string expected, got table)"},
		{`local function e(f, ...) return select(2, pcall(f, ...)) end print(e(string.rep, "x"):match("bad.*"))`, "bad argument #2 to '?' (number expected, got no value)"},
		{`string.rep("x", {})`, "error: <string>:1: bad argument #2 to 'rep' (number expected, got table)"},
		{`local s = "x" s:rep({})`, "error: <string>:1: bad argument #1 to 'rep' (number expected, got table)"},
		{`local s = "x" s.rep()`, "error: <string>:1: bad argument #1 to 'rep' (string expected, got no value)"},
		{`local r = string.rep r("x", "y")`, "error: <string>:1: bad argument #2 to 'r' (number expected, got string)"},
		{`("x"):rep()`, "error: <string>:1: bad argument #1 to 'rep' (number expected, got no value)"},
		{`string.rep(nil)`, "error: <string>:1: bad argument #1 to 'rep' (string expected, got nil)"},
		{`math.floor("x")`, "error: <string>:1: bad argument #1 to 'floor' (number expected, got string)"},
		{`print(string.rep("x", "3"), string.sub("hello", "2", "3"), ("x"):rep("2"), math.floor("3.7"), string.char("65"), select("2", "a", "b", "c"))`,
			"xxx\tel\txx\t3\tA\tb\tc"},
		{`print(table.concat({1, 2, 3}, ",", "1", "2"), unpack({1, 2, 3}, "2"))`, "1,2\t2\t3"},
		{`print(string.byte("abc", "2"), ("abc"):sub(" 2 "), math.max("3", 2), string.format("%d %5.1f", "12", "3.14159"))`, "98\tbc\t3\t12   3.1"},
		{`local t = {3, 1, 2} table.sort(t, nil) print(t[1], t[2], t[3])`, "1\t2\t3"},
		{`print(select("#", 1, nil, 3), select("#x", 1), select(-1, "a", "b"), select(2, "a", "b"))`, "3\t1\tb\tb"},
		{`print(select(2, pcall(select, -3, "a")):match("bad.*"))`, "bad argument #1 to '?' (index out of range)"},
		{`select("x")`, "error: <string>:1: bad argument #1 to 'select' (number expected, got string)"},
	})
}

// The messages are lua5.1's, with its "c:1:" (the chunk's name) as
// "<string>:1:".
func TestErrorsNameVariablesAs51(t *testing.T) {
	check51(t, [][2]string{
		{`local process = {} process.spwan()`, "error: <string>:1: attempt to call field 'spwan' (a nil value)"},
		{`foo()`, "error: <string>:1: attempt to call global 'foo' (a nil value)"},
		{`local t t.x = 1`, "error: <string>:1: attempt to index local 't' (a nil value)"},
		{`local t = {} t.x.y = 1`, "error: <string>:1: attempt to index field 'x' (a nil value)"},
		{`local t = {} print(t.x.y)`, "error: <string>:1: attempt to index field 'x' (a nil value)"},
		{`local a = 'x' return a + 1`, "error: <string>:1: attempt to perform arithmetic on local 'a' (a string value)"},
		{`return x + 1`, "error: <string>:1: attempt to perform arithmetic on global 'x' (a nil value)"},
		{`return 1 + x`, "error: <string>:1: attempt to perform arithmetic on global 'x' (a nil value)"},
		{`local s return 'a' .. s`, "error: <string>:1: attempt to concatenate local 's' (a nil value)"},
		{`local s return s .. 'a'`, "error: <string>:1: attempt to concatenate local 's' (a nil value)"},
		{`return 1 < nil`, "error: <string>:1: attempt to compare number with nil"},
		{`return {} < {}`, "error: <string>:1: attempt to compare two table values"},
		{`return #nil`, "error: <string>:1: attempt to get length of a nil value"},
		{`local t return #t`, "error: <string>:1: attempt to get length of local 't' (a nil value)"},
		{`local u local function f() return u.x end return f()`, "error: <string>:1: attempt to index upvalue 'u' (a nil value)"},
		{`local o = {} o:foo()`, "error: <string>:1: attempt to call method 'foo' (a nil value)"},
		{`local t = {} t[1]()`, "error: <string>:1: attempt to call field '?' (a nil value)"},
		{`local t = {} local k = 'a' t[k]()`, "error: <string>:1: attempt to call field '?' (a nil value)"},
		{`return -{}`, "error: <string>:1: attempt to perform arithmetic on a table value"},
		{`return ('x')()`, "error: <string>:1: attempt to call a string value"},
		{`local a = {} return a.b.c.d`, "error: <string>:1: attempt to index field 'b' (a nil value)"},
		{`return math.foo()`, "error: <string>:1: attempt to call field 'foo' (a nil value)"},
		{`string.x.y = 1`, "error: <string>:1: attempt to index field 'x' (a nil value)"},
		{`local t = setmetatable({}, {__index = 5}) return t.x`, "error: <string>:1: attempt to index a number value"},
		{`return nil .. 'x'`, "error: <string>:1: attempt to concatenate a nil value"},
		{`local a, b = 1 return a .. b .. 'c'`, "error: <string>:1: attempt to concatenate local 'b' (a nil value)"},
		{`return 2 ^ {}`, "error: <string>:1: attempt to perform arithmetic on a table value"},
		{`local x = nil; x()`, "error: <string>:1: attempt to call local 'x' (a nil value)"},
		{`local x = {} x.y:z()`, "error: <string>:1: attempt to index field 'y' (a nil value)"},
		{`for i = 1, 2 do local t; t.x = i end`, "error: <string>:1: attempt to index local 't' (a nil value)"},
		{`local function f(a) return a.b end f(nil)`, "error: <string>:1: attempt to index local 'a' (a nil value)"},
		{`return 'a' < 1`, "error: <string>:1: attempt to compare string with number"},
		{`return {} <= 1`, "error: <string>:1: attempt to compare table with number"},
		{`local a = 'abc' return a.x.y`, "error: <string>:1: attempt to index field 'x' (a nil value)"},
		{`local u = nil; (function() u() end)()`, "error: <string>:1: attempt to call upvalue 'u' (a nil value)"},
		{`return (nil)()`, "error: <string>:1: attempt to call a nil value"},
	})
}
