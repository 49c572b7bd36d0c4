package lua

import (
	"bytes"
	"strings"
	"testing"
)

// runCapturing runs src in a fresh state and returns what it printed
// (print writes through tostring, as 5.1's does) and the error it
// raised, if any.
func runCapturing(src string) (string, error) {
	L := NewState()
	defer L.Close()
	var out bytes.Buffer
	L.SetGlobal("print", L.NewFunction(func(L *LState) int {
		out.WriteString(PrintLine(L))
		return 0
	}))
	err := L.DoString(src)
	return out.String(), err
}

// run51 runs src in a fresh state and returns what it printed, then the
// error it raised.
func run51(t *testing.T, src string) string {
	t.Helper()
	out, err := runCapturing(src)
	if ae, ok := err.(*ApiError); ok {
		out += "error: " + ae.Object.String()
	} else if err != nil {
		out += "error: " + err.Error()
	}
	return out
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
		// not folded: 1/0 divides by the constant 0, which is -0 here
		{`local a = -0 print(a, 0, 1/0, -1/0, 0/0, (-8)^0.5 ~= (-8)^0.5, 1e309 - 1e309)`, "-0\t-0\t-inf\tinf\t-nan\ttrue\t-nan"},
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

// The table library's 5.1 functions gopher-lua lacked: foreach and
// foreachi stop at the first non-nil result and return it (one value);
// setn raises.
func TestTableForeachAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(table.foreach({10, 20, 30}, function(k, v) if v == 20 then return k, v end end))`, "2"},
		{`print(table.foreachi({10, 20, 30}, function(i, v) if v == 30 then return "x" end end))`, "x"},
		{`print(select("#", table.foreach({1, 2}, function() end)), select("#", table.foreachi({}, print)))`, "0\t0"},
		{`local n = 0 table.foreach({a = 1, b = 2, 3}, function(k, v) n = n + v end) print(n)`, "6"},
		{`local s = "" table.foreachi({5, 6, nil, 8}, function(i, v) s = s .. i .. "=" .. tostring(v) .. " " end) print(s)`, "1=5 2=6 3=nil 4=8 "},
		{`print(pcall(table.setn, {}, 3))`, "false\t'setn' is obsolete"},
		{`table.setn({}, 3)`, "error: <string>:1: 'setn' is obsolete"},
		{`print(pcall(table.foreach, {}))`, "false\tbad argument #2 to '?' (function expected, got no value)"},
		{`print(pcall(table.foreachi, nil, print))`, "false\tbad argument #1 to '?' (table expected, got nil)"},
	})
}

func TestDifftimeAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(os.difftime(10, 3), os.difftime(10), os.difftime(10.7, 3.2), os.difftime("7", "2"))`, "7\t10\t7\t5"},
		{`print(pcall(os.difftime))`, "false\tbad argument #1 to '?' (number expected, got no value)"},
	})
}

// print calls the global tostring for each value, as 5.1's does.
func TestPrintCallsTostringAs51(t *testing.T) {
	check51(t, [][2]string{
		{`tostring = function(v) return "X" end print(1, nil)`, "X\tX"},
		{`tostring = function(v) return 5 end print("a")`, "5"},
		{`local mt = {__tostring = function() return "T" end} print(setmetatable({}, mt), 1.5, nil)`, "T\t1.5\tnil"},
		{`print(pcall(print, setmetatable({}, {__tostring = function() return {} end})))`, "false\t'tostring' must return a string to 'print'"},
		{`tostring = function() return {} end print(1)`, "error: <string>:1: 'tostring' must return a string to 'print'"},
		{`tostring = nil print(1)`, "error: attempt to call a nil value"},
	})
}

// collectgarbage's options answer as 5.1's; a step finishes a cycle when
// it is given enough work (a small step on any Go heap does not).
func TestCollectGarbageAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(collectgarbage("collect"), collectgarbage(), type(collectgarbage("count")), collectgarbage("count") > 0)`, "0\t0\tnumber\ttrue"},
		{`print(collectgarbage("step"), collectgarbage("step", 1000000), collectgarbage("step", 1000000))`, "false\ttrue\ttrue"},
		{`collectgarbage() local a = {} for i = 1, 100 do a[i] = {{}} end
local i = 0 repeat i = i + 1 until collectgarbage("step") print(i > 10)`, "true"},
		{`local function n(s) collectgarbage() local i = 0 repeat i = i + 1 until collectgarbage("step", s) return i end
print(n(6) < n(2), n(10000))`, "true\t1"},
		{`print(collectgarbage("setpause", 100), collectgarbage("setpause", 200), collectgarbage("setstepmul", 300), collectgarbage("setstepmul", 200))`, "200\t100\t200\t300"},
		{`collectgarbage("setstepmul", 0) print(collectgarbage("step"))`, "true"},
		{`print(collectgarbage("stop"), collectgarbage("restart"))`, "0\t0"},
		{`print(pcall(collectgarbage, "x"))`, "false\tbad argument #1 to '?' (invalid option 'x')"},
	})
}

// An error raised by a Go function gets the position of its caller
// (level 1, as 5.1's luaL_where) only when the caller is a Lua function:
// pcall(f) calling a Go function directly gives none; error's level 2 is
// the caller's caller; an operation a Go function does (sort's compare)
// has no position, as 5.1's luaG_runerror in a C function.
func TestErrorPositionsAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(pcall(string.rep))`, "false\tbad argument #1 to '?' (string expected, got no value)"},
		{`print(pcall(error, "x"))`, "false\tx"},
		{`print(pcall(error, "x", 2))`, "false\t<string>:1: x"},
		{`local function f()
  error("lvl2", 2)
end
print(pcall(function()
  f()
end))`, "false\t<string>:5: lvl2"},
		{`print(pcall(function() string.rep() end))`, "false\t<string>:1: bad argument #1 to 'rep' (string expected, got no value)"},
		{`print(pcall(function() local t = setmetatable({}, {__index = string.rep}) return t.x end))`, "false\t<string>:1: bad argument #1 to '?' (string expected, got table)"},
		{`print(pcall(function() error("lvl3", 3) end))`, "false\t<string>:1: lvl3"},
		{`print(pcall(function() table.sort({3, 2, 1}, function(a, b) error("in cmp", 2) end) end))`, "false\tin cmp"},
		{`print(pcall(function() string.gsub("abc", "%w", function(c) error("in gsub", 2) end) end))`, "false\tin gsub"},
		{`print(pcall(table.sort, {1, "x", 3}))`, "false\tattempt to compare string with number"},
		{`print(pcall(function() local x = nil; return x.y end))`, "false\t<string>:1: attempt to index local 'x' (a nil value)"},
	})
}

// table.maxn looks at every key, as 5.1's: non-integer and hash-part
// numbers count, strings do not.
func TestTableMaxnAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(table.maxn{}, table.maxn{["1000"] = true}, table.maxn{["1000"] = true, [24.5] = 3}, table.maxn{[1000] = true})`, "0\t0\t24.5\t1000"},
		{`print(table.maxn{[10] = true, [100*math.pi] = print}, table.maxn{[-5] = 1, [-2.5] = 1}, table.maxn{1, 2, nil, 4, x = 9})`, "314.15926535898\t0\t4"},
		{`local t = {1, 2, 3} t[100] = 1 t[3] = nil print(table.maxn(t))`, "100"},
	})
}

// load, loadstring and loadfile report a syntax error as 5.1's
// "chunk:line: message near 'token'" (the message is gopher-lua's), with
// the chunk shown as luaO_chunkid shows it and '<eof>' at the end of the
// source on its last line; a string chunk without a name is named by its
// text, and "=name" positions show name.
func TestSyntaxErrorMessagesAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(loadstring("break label"))`, `nil	[string "break label"]:1: syntax error near 'label'`},
		{`print(loadstring("a = 1 +"))`, `nil	[string "a = 1 +"]:1: syntax error near '<eof>'`},
		{`print(loadstring("  local a = {4\n\n"))`, `nil	[string "  local a = {4..."]:3: syntax error near '<eof>'`},
		{`print(loadstring("x = = 2", "=named"))`, `nil	named:1: syntax error near '='`},
		{`print(loadstring("x = = 2", "@dir/file.lua"))`, `nil	dir/file.lua:1: syntax error near '='`},
		{`print(loadstring("x = = 2\nline 2", "modname"))`, `nil	[string "modname"]:1: syntax error near '='`},
		{`print(loadstring("x = = 2 " .. string.rep("y", 60)))`, `nil	[string "x = = 2 ` + strings.Repeat("y", 55) + `..."]:1: syntax error near '='`},
		{`print(loadstring("x =", "@" .. string.rep("d", 80)))`, `nil	...` + strings.Repeat("d", 72) + `:1: syntax error near '<eof>'`},
		{`print(load(coroutine.wrap(function() coroutine.yield("x = = ") end)))`, `nil	(load):1: syntax error near '='`},
		{`print(pcall(loadstring("error('x')")))`, `false	[string "error('x')"]:1: x`},
		{`print(pcall(loadstring("error('x')", "=(named)")))`, `false	(named):1: x`},
		{`print(loadstring("[[a]]"))`, `nil	[string "[[a]]"]:1: syntax error near '[[a]]'`},
		{`print(loadstring("'aa'"))`, `nil	[string "'aa'"]:1: syntax error near ''aa''`},
		{`print(loadstring("x = [==[a]==] [=[b]=]"))`, `nil	[string "x = [==[a]==] [=[b]=]"]:1: syntax error near '[=[b]=]'`},
		{`print(loadstring("1.000"))`, `nil	[string "1.000"]:1: syntax error near '1.000'`},
	})
}

// A ';' only ends a statement, as in 5.1's grammar: an empty statement is
// a syntax error (errors.lua:39).
func TestEmptyStatementIsSyntaxErrorAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(loadstring(";"))`, `nil	[string ";"]:1: syntax error near ';'`},
		{`print(loadstring("a=1;;"))`, `nil	[string "a=1;;"]:1: syntax error near ';'`},
		{`print(loadstring("return;;"))`, `nil	[string "return;;"]:1: syntax error near ';'`},
		{`print(loadstring("do ; end"))`, `nil	[string "do ; end"]:1: syntax error near ';'`},
		{`local a = 1; local b = 2; print(a + b);`, "3"},
		{`print((loadstring("local x = 1; return x;"))())`, "1"},
	})
}

// A '(' on a line after the expression it would call is 5.1's ambiguous
// syntax whatever token ends that expression (gopher-lua checked only
// after ')', and lost the check when the arguments were not empty).
func TestAmbiguousCallAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(loadstring("a=math.sin\n(3)"))`, `nil	[string "a=math.sin..."]:2: ambiguous syntax (function call x new statement) near '('`},
		{`print(loadstring("f()\n(g)"))`, `nil	[string "f()..."]:2: ambiguous syntax (function call x new statement) near '('`},
		{`print(loadstring("f 'x'\n(g)()"))`, `nil	[string "f 'x'..."]:2: ambiguous syntax (function call x new statement) near '('`},
		{`print(type(loadstring("local t = {}\n(print)('ok')")), type(loadstring("f(\n1\n)")), type(loadstring("f\n  .x(1)")))`, "function\tfunction\tfunction"},
	})
}

// The file metatable has 5.1's __gc, and a method given no file says
// 5.1's "FILE* expected" (errors.lua:111).
func TestFileGCAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(pcall(getmetatable(io.stdin).__gc))`, "false\tbad argument #1 to '?' (FILE* expected, got no value)"},
		{`print(pcall(io.stdout.write, 1))`, "false\tbad argument #1 to '?' (FILE* expected, got number)"},
		{`local f = io.tmpfile() getmetatable(f).__gc(f) getmetatable(io.stdout).__gc(io.stdout) print(io.type(f), io.type(io.stdout))`, "closed file\tfile"},
	})
}

// A generic for's errors are on the line its explist starts on, as 5.1's
// forlist takes it, and its hidden locals are not names an error gives
// (errors.lua:126).
func TestGenericForErrorsAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(pcall(loadstring("\n local a \n for k,v in 3 \n do \n print(k) \n end")))`, `false	[string "..."]:3: attempt to call a number value`},
		{`print(pcall(loadstring("\n\n for k,v in \n 3 \n do \n print(k) \n end")))`, `false	[string "..."]:4: attempt to call a number value`},
		{`print(pcall(loadstring("\n\n for k,v in \n pairs(nil) \n do \n print(k) \n end")))`, `false	[string "..."]:4: bad argument #1 to 'pairs' (table expected, got nil)`},
	})
}

// Nesting deeper than 5.1's 200 levels is its "chunk has too many syntax
// levels"; the same nesting under the limit loads (errors.lua:214-222).
func TestSyntaxLevelsAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(select(2, loadstring("local a; a=" .. string.rep("{", 400))))`, `[string "local a; a=` + strings.Repeat("{", 52) + `..."]:1: chunk has too many syntax levels`},
		{`local n = 0 for _, r in ipairs{{"a=", "("}, {"", "a("}, {"", "do "}, {"", "while a do "}, {"", "if a then else "}, {"", "function foo () "}, {"a=", "a.."}, {"a=", "a^"}} do
  local f, err = loadstring("local a; " .. r[1] .. string.rep(r[2], 400))
  if not f and err:find("syntax levels") then n = n + 1 end
end print(n)`, "8"},
		{`print(loadstring("x = " .. string.rep("a .. ", 150) .. "a") ~= nil, loadstring("x = " .. string.rep("{", 150) .. string.rep("}", 150)) ~= nil,
  loadstring(string.rep("x = a .. b\n", 300)) ~= nil, loadstring(string.rep("do ", 150) .. string.rep("end ", 150)) ~= nil)`, "true\ttrue\ttrue\ttrue"},
	})
}

// TestTailCallLevelsAs51: GetStack answers the calls a function replaced
// by tail calls as levels right above it, as Lua 5.1's lost tail calls
// (it answered the stack's bottom frame for them): getinfo describes
// them as 5.1's info_tailcall, they have no locals, the traceback writes
// one "(tail call): ?" each. The outputs are lua5.1's.
func TestTailCallLevelsAs51(t *testing.T) {
	check51(t, [][2]string{
		{`local function f()
  local t = debug.getinfo(2)
  print(t.what, t.source, t.currentline, t.linedefined, t.func, t.name)
  print(debug.getinfo(3, "S").what, debug.getinfo(4, "S").what, debug.getlocal(2, 1))
  local _, n = debug.traceback():gsub("%(tail call%): %?", "")
  print(n)
end
local function g() return f() end
local function h() return g() end
h()`, "tail\t=(tail call)\t-1\t-1\tnil\t\ntail\tmain\tnil\n2"},
		{`local function foo(x) if x == 0 then print(debug.getinfo(1002).what, debug.getinfo(1001).what) else return foo(x - 1) end end
foo(1000)`, "main\ttail"},
	})
}
