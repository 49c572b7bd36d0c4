package lua

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runPrinting runs src in a fresh state and returns what it printed; a
// compile or runtime error fails the test.
func runPrinting(t *testing.T, src string) string {
	t.Helper()
	out, err := runCapturing(src)
	if err != nil {
		t.Fatalf("%v\nprinted so far:\n%s", err, out)
	}
	return out
}

// checkLua51 runs src and compares its output with want, which is what
// lua5.1 prints for it; where lua5.1 is installed, it checks want too.
func checkLua51(t *testing.T, src, want string) {
	t.Helper()
	if got := runPrinting(t, src); got != want {
		t.Errorf("got:\n%s\nwant (lua5.1):\n%s", got, want)
	}
	if path, err := exec.LookPath("lua5.1"); err == nil {
		cmd := exec.Command(path, "-")
		cmd.Stdin = strings.NewReader(src)
		ref, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("lua5.1: %v\n%s", err, ref)
		}
		if string(ref) != want {
			t.Errorf("the test's expectation differs from lua5.1:\n%s\nlua5.1:\n%s", want, ref)
		}
	}
}

const multipleAssignmentSrc = `
local log = {}
local function L(s) log[#log+1] = s end
local function show(...) local t = {} for i = 1, select('#', ...) do t[#t+1] = tostring((select(i, ...))) end print(table.concat(t, " ")) end
-- locals
local a, b, c = 1, 2, 3
a, b = b, a; show(a, b)
a, b, c = c, a, b; show(a, b, c)
local p, q = 0, 1
for i = 1, 10 do p, q = q, p + q end; show(p, q)
-- globals
ga, gb = 1, 2; ga, gb = gb, ga; show(ga, gb)
gp, gq = 0, 1
for i = 1, 10 do gp, gq = gq, gp + gq end; show(gp, gq)
-- upvalues
local u1, u2 = "x", "y"
local function sw() u1, u2 = u2, u1 end
sw(); show(u1, u2)
local function fib() local x, y = 0, 1; local function step() x, y = y, x + y end; for i = 1, 10 do step() end; return x end
show(fib())
-- mixes
local m = 1; gm = 2
m, gm, u1 = gm, m, m; show(m, gm, u1)
-- fields: index expressions are evaluated before any assignment
local t = {10, 20, 30}
local i, j = 1, 3
t[i], t[j] = t[j], t[i]; show(t[1], t[2], t[3])
i, t[i] = i + 1, 20; show(i, t[1], t[2])
t[i], i = 99, 1; show(i, t[1], t[2], t[3])
local s = {x = 1}
local s0 = s
s.x, s = 5, {x = 7}; show(s0.x, s.x)
s, s.x = {x = 9}, 6; show(s0.x, s.x)
-- multiple results, fewer and more values than targets
local function f() return 1, 2, 3 end
local function g0() end
a, b, c = f(); show(a, b, c)
a, b, c = 0, f(); show(a, b, c)
a, b, c = f(), 10; show(a, b, c)
a, b, c = (f()); show(a, b, c)
a, b = g0(); show(a, b)
a, b, c = 1; show(a, b, c)
a, b = 1, 2, 3, L("extra"); show(a, b, #log)
a = f(), f(); show(a)
t.k, gb, b = f(); show(t.k, gb, b)
t.k, gb, b = 7; show(t.k, gb, b)
-- varargs
local function va(...) local x, y, z; x, y, z = ...; show(x, y, z); x, y = 0, ...; show(x, y); t[1], t[2] = ...; show(t[1], t[2]) end
va(4, 5, 6)
va()
local function va2(...) local a, b = 1, 2; a = ...; return a, b end
show(va2(5))
-- order of evaluation and of assignment (__newindex and __index log)
local obs = setmetatable({}, {__newindex = function(_, k, v) L("set " .. tostring(k) .. "=" .. tostring(v)) end,
  __index = function(_, k) L("get " .. tostring(k)); return k end})
local function K(k) L("key " .. k); return k end
local function V(v) L("val " .. v); return v end
log = {}
obs[K("a")], obs[K("b")], obs.c = V(1), V(2), V(3)
print(table.concat(log, ", "))
log = {}
obs[K("a")], obs[K("b")] = V(1)
print(table.concat(log, ", "))
log = {}
obs.x, obs.y = obs.p, obs.q
print(table.concat(log, ", "))
-- a call assigned to the last parameter (gopher-lua called it in place)
local function lp(x) local y = 5; x = f(); return x, y end
show(lp(0))
-- other kinds of expression on the right
local l1, l2 = nil, 2
l1, l2 = l2 or 1, l1 and l1.x; show(l1, l2)
l1, l2 = {l2}, {l1}; show(type(l1), l2[1])
local cc, dd = "a", "b"
cc, dd = dd .. cc, cc .. dd; show(cc, dd)
local n1, n2 = 1, 2; n1, n2 = -n2, not n1; show(n1, n2)
local r1, r2 = 1, 2; r1, r2 = r2 < r1, r1 < r2; show(r1, r2)
local fn1; fn1, a = function() return a end, 42; show(fn1(), a)
local st = {}; st.a, st.b = st, 1; show(st.a == st, st.b)
local x1, x2, big = 1, 2, {}
big[x1], big[x2], x1, x2 = x2, x1, x2, x1; show(big[1], big[2], x1, x2)
`

const multipleAssignmentWant = `2 1
3 2 1
55 89
2 1
55 89
y x
55
2 1 1
30 20 10
2 20 20
1 20 99 10
5 7
5 9
1 2 3
0 1 2
1 10 nil
1 nil nil
nil nil
1 nil nil
1 2 1
1
1 2 3
7 nil nil
4 5 6
0 4
4 5
nil nil nil
0 nil
nil nil
5 2
key a, key b, val 1, val 2, val 3, set c=3, set b=2, set a=1
key a, key b, val 1, set b=nil, set a=1
get p, get q, set y=q, set x=p
1 5
2 nil
table 2
ba ab
-2 false
false true
42 42
true 1
2 1 2 1
`

// A multiple assignment evaluates every expression before it assigns
// (Lua 5.1 manual §2.4.3), then assigns last to first as 5.1 does.
func TestMultipleAssignment51(t *testing.T) {
	checkLua51(t, multipleAssignmentSrc, multipleAssignmentWant)
}

// `for k, v in next, t` visits every key: the explist is adjusted to the
// loop's three hidden variables, so the control variable starts nil
// whatever its register held before (here a key of t, left there by a
// block that ended).
func TestGenericForNextVisitsEveryKey(t *testing.T) {
	checkLua51(t, `
local t = {a=1,b=2,c=3}; x = x or {{},{}}; local n=0; for k,v in next, t do n=n+1 end; print(n)
local function f()
  local t = {a=1,b=2,c=3}
  do local s1, s2, s3, s4 = nil, nil, nil, next(t) end
  local n = 0
  for k, v in next, t do n = n + 1 end
  print(n)
end
f()
local function g()
  local t = {10, 20, 30}
  do local s1, s2, s3, s4, s5 = nil, nil, nil, nil, 1 end
  local n, sum = 0, 0
  for k in next, t do n = n + 1; sum = sum + k end
  print(n, sum)
end
g()
local function h()
  local t = {10, 20, 30}
  do local s1, s2, s3, s4 = nil, nil, nil, 2 end
  local n = 0
  for k, v, w, z in next, t do n = n + 1; assert(w == nil and z == nil) end
  print(n)
end
h()
local function i()
  local t = {10, 20, 30}
  x = x or {{},{}}
  local n = 0
  for k, v in next, t do n = n + 1 end
  print(n)
end
i()
`, "3\n3\n3\t6\n3\n3\n")
}

// bigConstructorSrc is a chunk with table constructors of n items: all
// positional, positional with a keyed field every third item (each key a
// constant of its own: past the 256th, keys are loaded into registers),
// and positional ending in a call.
func bigConstructorSrc(n int) string {
	var b strings.Builder
	b.WriteString("local t = {")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,", i)
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "print(#t, t[1], t[25550], t[25551], t[%d], t[-49], t[0])\n", n)
	b.WriteString("local u = {")
	for i := 1; i <= n; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&b, "k%d=%d,", i, i)
		} else {
			fmt.Fprintf(&b, "%d,", i)
		}
	}
	b.WriteString("}\n")
	b.WriteString("local n, ok = 0, true for k, v in pairs(u) do n = n + 1 if type(k) == 'number' then ok = ok and v == k + math.floor((k - 1) / 2) else ok = ok and k == 'k' .. v end end\n")
	b.WriteString("print(n, #u, ok, u[1], u[2], u[3], u.k3, u[-49])\n")
	// a keyed field's value ending in SETLIST's data word, in a function
	// with no locals (the peephole looks at instructions writing above
	// them)
	b.WriteString("local r = (function() return {rows = {")
	for i := 1; i <= 25600; i++ {
		fmt.Fprintf(&b, "%d,", i)
	}
	b.WriteString("}} end)()\nprint(#r.rows, r.rows[25600])\n")
	b.WriteString("local function f() return 'a', 'b', 'c' end\n")
	for _, m := range []int{50, 30000} {
		b.WriteString("local w = {")
		for i := 1; i <= m; i++ {
			fmt.Fprintf(&b, "%d,", i)
		}
		b.WriteString("f()}\n")
		b.WriteString("print(#w, w[1], w[#w - 3], w[#w - 2], w[#w])\n")
	}
	return b.String()
}

// Table constructors keep every item, however many: past 25,550 items
// SETLIST takes its block number from the next word (gopher-lua wrote 0
// there); a keyed field after the 50th item does not store the items
// again; a call after a multiple of 50 items goes after them.
func TestBigTableConstructor(t *testing.T) {
	checkLua51(t, bigConstructorSrc(100000), `100000	1	25550	25551	100000	nil	nil
100000	66667	true	1	2	4	3	nil
25600	25600
53	1	50	a	c
30003	1	30000	a	c
`)
}

// dataFileSrc is a data file of about size bytes as programs keep them:
// a list of records, then a long list of numbers and strings.
func dataFileSrc(size int) string {
	var b strings.Builder
	b.WriteString("return {\n  rows = {\n")
	i := 0
	for b.Len() < size*7/10 {
		i++
		fmt.Fprintf(&b, "    {id=%d, name=\"x%d\", v=%g, tags={\"a\",\"b%d\"}, ok=%v},\n", i, i, float64(i)*1.5, i%7, i%2 == 1)
	}
	b.WriteString("  },\n  nums = {")
	n := 0
	for b.Len() < size {
		n++
		fmt.Fprintf(&b, "%d.5, \"s%d\", ", n%5000, n%5000)
	}
	b.WriteString("},\n}\n")
	return b.String()
}

// A 5 MB data file compiles and loads whole (each item in place: the
// SETLIST data words past 25,550 items are not taken for instructions by
// the peephole that drops a MOVE). Compiling it took over a minute with
// the constants searched linearly; the time is logged, not asserted.
func TestCompileDataFile5MB(t *testing.T) {
	src := dataFileSrc(5 << 20)
	L := NewState()
	defer L.Close()
	start := time.Now()
	fn, err := L.Load(strings.NewReader(src), "data")
	if err != nil {
		t.Fatal(err)
	}
	compiled := time.Since(start)
	L.Push(fn)
	L.Call(0, 1)
	d := L.CheckTable(-1)
	t.Logf("%d bytes compiled in %v (and run in %v)", len(src), compiled, time.Since(start)-compiled)
	rows, nums := d.RawGetString("rows").(*LTable), d.RawGetString("nums").(*LTable)
	if rows == nil || nums == nil {
		t.Fatalf("rows %v, nums %v", d.RawGetString("rows"), d.RawGetString("nums"))
	}
	nrows, nnums := rows.Len(), nums.Len()
	if nrows < 50000 || nnums < 100000 {
		t.Fatalf("%d rows, %d numbers and strings", nrows, nnums)
	}
	last, ok := rows.RawGetInt(nrows).(*LTable)
	if !ok {
		t.Fatalf("last row is %v", rows.RawGetInt(nrows))
	}
	if got, want := last.RawGetString("name").String(), fmt.Sprintf("x%d", nrows); got != want {
		t.Errorf("last row's name %q, want %q", got, want)
	}
	for i := 1; i <= nnums; i += 2 {
		n := (i + 1) / 2 % 5000
		if got, want := nums.RawGetInt(i), LNumber(float64(n)+0.5); got != want {
			t.Fatalf("item %d is %v, want %v", i, got, want)
		}
		if got, want := nums.RawGetInt(i+1), LString(fmt.Sprintf("s%d", n)); got != want {
			t.Fatalf("item %d is %v, want %v", i+1, got, want)
		}
	}
}

// BenchmarkCompileDataFile compiles a 1 MB data file (go test ./lua -run
// NONE -bench CompileDataFile).
func BenchmarkCompileDataFile(b *testing.B) {
	src := dataFileSrc(1 << 20)
	L := NewState()
	defer L.Close()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := L.Load(strings.NewReader(src), "data"); err != nil {
			b.Fatal(err)
		}
	}
}

// In `local f = function ... end` the body's f is the f outside (the
// local's scope begins after the statement); in `local function f` it is
// the local itself.
func TestLocalFunctionScope(t *testing.T) {
	checkLua51(t, `
f = function() return "global" end
local f = function(n) if n then return f() end return "local" end
print(f(true))
local g = 1
local g = function() return g end
print(g())
local function h(n) if n > 0 then return h(n - 1) end return "recursive" end
print(h(3))
local k = function(n) return type(k) end
print(k())
`, "global\n1\nrecursive\nnil\n")
}

// A block's end ends its own locals' scope in the debug information (it
// ended the function's first locals, by register number): debug.getlocal
// sees the locals live where it looks, as in Lua 5.1.
func TestDebugLocalsScope(t *testing.T) {
	checkLua51(t, `
local function f()
  do local a = 1 end
  do local b = 2
    local i = 1
    while true do
      local name, value = debug.getlocal(1, i)
      if not name then break end
      print(name, value)
      i = i + 1
    end
  end
end
f()
`, "b\t2\ni\t2\n")
}

// TestGotoIsAName: goto is an ordinary name in Lua 5.1 (gopher-lua
// reserved it for the 5.2 goto statement).
func TestGotoIsAName(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`
		local goto = 1
		local t = {goto = goto + 1}
		t.goto = t.goto + 1
		function t:goto() return self end
		assert(goto == 1 and t:goto() == t)`); err != nil {
		t.Fatal(err)
	}
}

// TestCompileLimitsAs51: Lua 5.1's lparser.c limits, as its messages: more
// than 200 active local variables (LUAI_MAXVARS) and more than 60
// upvalues (LUAI_MAXUPVALUES) in a function are "main function has more
// than ..." / "function at line N has more than ..."; more than 250
// registers (MAXSTACK) is "function or expression too complex" (5.1 adds
// the token it was at: cut here); each a "chunk:line:" message as 5.1's
// syntax errors (the lines are not compared here: the parser raises the
// first two at 5.1's line, TestLimitsWhileParsingAs51; the compiler
// raises the third on the statement's line, where 5.1's may be a later
// one)
// (gopher-lua: "compile error near line(0) ...: too many
// local variables" past 200 registers, no upvalue limit; 200 locals and
// up to 250 registers are fine.)
func TestCompileLimitsAs51(t *testing.T) {
	checkLua51(t, `
local function try(s) local f, e = loadstring(s) print(f ~= nil, (e and e:gsub(" near '.-'$", ""):gsub("%]:%d+:", "]:L:"))) end
local function locals(n) local t = {} for i = 1, n do t[i] = "a" .. i end return "local " .. table.concat(t, ", ") .. "\n" end
try(locals(200))
try("local x\n" .. locals(200))
try("\nfunction foo ()\n" .. locals(300) .. "end")
try("local x\n" .. locals(199) .. "for i = 1, 2 do end")
try("do " .. locals(150) .. " end do " .. locals(150) .. " end")
try("function f(" .. string.rep("a, ", 200) .. "b) end")
local s = "local " for j = 1, 61 do s = s .. "a" .. j .. (j < 61 and ", " or "\n") end
try(s .. "return function() return " .. string.rep("a1 + ", 60) .. "a1 end")
s = s .. "return function()\n return " for j = 1, 61 do s = s .. "a" .. j .. (j < 61 and " + " or " end") end
try(s)
try("local a, b\nreturn function() return function() return function() return a + b end end end")
try("return f(" .. string.rep("1, ", 240) .. "1)")
try("return f(" .. string.rep("1, ", 260) .. "1)")
try("return " .. string.rep("1, ", 260) .. "1")
`, `true	nil
false	[string "local x..."]:L: main function has more than 200 local variables
false	[string "..."]:L: function at line 2 has more than 200 local variables
false	[string "local x..."]:L: main function has more than 200 local variables
true	nil
false	[string "function f(a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a..."]:L: function at line 1 has more than 200 local variables
true	nil
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:L: function at line 2 has more than 60 upvalues
true	nil
true	nil
false	[string "return f(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ..."]:L: function or expression too complex
false	[string "return 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,..."]:L: function or expression too complex
`)
}

// bigConstantTableSrc is a chunk returning a table of n distinct
// constants (numbers and strings).
func bigConstantTableSrc(n int) string {
	var b strings.Builder
	b.WriteString("return {\n")
	for i := 0; i < n; i += 2 {
		fmt.Fprintf(&b, "%d.5, \"s%d\",\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// manyFunctionsSrc is a module of n functions with parameters, locals,
// a loop and a closure taking upvalues of two levels.
func manyFunctionsSrc(n int) string {
	var b strings.Builder
	b.WriteString("local M = {}\nlocal helper, scale = 1, 2\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `function M.f%d(a, b, ...)
  local x, y = a + helper, b * scale
  for i = 1, 3 do x = x + i end
  for k, v in pairs(M) do y = y + #k end
  return function() return x + y + a + helper end
end
`, i)
	}
	b.WriteString("return M\n")
	return b.String()
}

// BenchmarkCompileBigTable compiles a table of 40,000 constants and
// BenchmarkCompileManyFunctions a file of 10,000 functions (parse and
// compile; go test ./lua -run NONE -bench 'Compile(BigTable|Many)').
func BenchmarkCompileBigTable(b *testing.B) {
	benchmarkLoad(b, bigConstantTableSrc(40000))
}

func BenchmarkCompileManyFunctions(b *testing.B) {
	benchmarkLoad(b, manyFunctionsSrc(10000))
}

func benchmarkLoad(b *testing.B, src string) {
	L := NewState()
	defer L.Close()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := L.Load(strings.NewReader(src), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
