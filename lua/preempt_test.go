package lua

// Tests of preemption (preempt.go): a coroutine yielded between any two
// of its instructions computes what it computes unpreempted.

import (
	"strings"
	"testing"
)

// preemptProgram exercises what a resume must leave as it was: the
// stack's top between a call with multiple results and the instruction
// that takes them (a table constructor, a call with a variable count),
// varargs, closures and upvalues, generic fors over Lua iterators and
// pairs, metamethods and pcall (nested loops, where the coroutine cannot
// yield: the flag stays set until it can), string building.
const preemptProgram = `
local out = {}
local function add(...) for i = 1, select('#', ...) do out[#out + 1] = tostring((select(i, ...))) end end
local function three() return 1, 2, 3 end
local function vargs(...) return select('#', ...), ... end
add(three())
add(#{three()}, select("#", three()))
add(vargs(three()))
add(vargs(nil, nil))
local function counter() local n = 0; return function() n = n + 1; return n end end
local c = counter(); c(); add(c(), c())
local function range(n) local i = 0; return function() i = i + 1; if i <= n then return i, i * i end end end
for i, sq in range(4) do add(i, sq) end
local keys = {}
for k in pairs({a = 1, b = 2, c = 3}) do keys[#keys + 1] = k end
table.sort(keys)
add(table.concat(keys, ","))
local mt = {__index = function(t, k) local s = 0; for i = 1, k do s = s + i end; return s end,
            __add = function(a, b) return "added" end}
local obj = setmetatable({}, mt)
add(obj[10], obj + obj)
add(pcall(function(x) local s = 0; for i = 1, x do s = s + i end; return s, "inside" end, 20))
add(pcall(error, "boom"))
table.sort(keys, function(a, b) return a > b end)
add(table.concat(keys, ","))
local s = ""
for i = 1, 5 do s = s .. string.rep("x", i) .. "," end
add(s, string.format("%d-%s", 42, "z"), ("abc"):upper())
add(unpack({three()}))
return table.concat(out, " ")
`

// runPreempted runs src in a coroutine whose interrupt preempts it at
// every other check (with the flag always up: every instruction is
// checked), resuming it with junk values a preempted coroutine must not
// see, and returns its result and how many times it was preempted.
func runPreempted(t *testing.T, src string) (string, int) {
	t.Helper()
	L := NewState()
	defer L.Close()
	fn, err := L.LoadString(src)
	if err != nil {
		t.Fatal(err)
	}
	in := &Interrupt{}
	pre := &Preemption{Values: []LValue{LString("preempted")}}
	checks := 0
	co, _ := L.NewThread()
	in.Check = func(th *LState) error {
		checks++
		if th != co || checks%2 == 1 {
			return nil
		}
		return pre
	}
	in.Flag.Store(1)
	co.SetInterrupt(in)
	preempts := 0
	st, err, vals := L.Resume(co, fn)
	for st == ResumeYield && err == nil {
		if len(vals) != 1 || vals[0] != LString("preempted") {
			t.Fatalf("a preempted coroutine yielded %v", vals)
		}
		if !co.Preempted() {
			t.Fatal("Preempted() is false after a preemption")
		}
		preempts++
		st, err, vals = L.Resume(co, nil, LString("junk"), LNumber(7))
	}
	if err != nil {
		t.Fatal(err)
	}
	return vals[0].String(), preempts
}

// TestPreemptedCoroutineComputesTheSame: preempted before every other
// instruction it can yield at, the program gives what it gives unbroken.
func TestPreemptedCoroutineComputesTheSame(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString("result = (function() " + preemptProgram + " end)()"); err != nil {
		t.Fatal(err)
	}
	want := L.GetGlobal("result").String()
	got, preempts := runPreempted(t, preemptProgram)
	if got != want {
		t.Fatalf("preempted:\n%s\nunbroken:\n%s", got, want)
	}
	if preempts < 100 {
		t.Fatalf("only %d preemptions", preempts)
	}
	t.Logf("%d preemptions; result %s", preempts, want)
}

// TestPreemptionWaitsOutNestedLoops: inside a metamethod, a comparator
// and gopher-lua's own pcall (loops nested in a call from Go) the
// coroutine is not preempted, however often Check asks: it yields at
// its first instruction after them.
func TestPreemptionWaitsOutNestedLoops(t *testing.T) {
	L := NewState()
	defer L.Close()
	var trace []string
	want := false // a preemption is asked for from each mark until it yields
	L.SetGlobal("mark", L.NewFunction(func(L *LState) int {
		trace = append(trace, L.CheckString(1))
		want = true
		return 0
	}))
	fn, err := L.LoadString(`
local obj = setmetatable({}, {__index = function() mark("in"); local s = 0; for i = 1, 50 do s = s + i end; mark("out"); return s end})
local v = obj.x
mark("after")
local t = {3, 1, 2}
table.sort(t, function(a, b) mark("cmp"); return a < b end)
mark("sorted")
pcall(function() mark("p1"); local s = 0; for i = 1, 50 do s = s + i end; mark("p2") end)
mark("end")
return v`)
	if err != nil {
		t.Fatal(err)
	}
	co, _ := L.NewThread()
	in := &Interrupt{}
	in.Check = func(th *LState) error {
		if want {
			return &Preemption{}
		}
		return nil
	}
	in.Flag.Store(1)
	co.SetInterrupt(in)
	var yieldsAfter []string // the last mark before each preemption
	st, err, vals := L.Resume(co, fn)
	for st == ResumeYield && err == nil {
		want = false
		yieldsAfter = append(yieldsAfter, trace[len(trace)-1])
		st, err, vals = L.Resume(co, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] != LNumber(1275) {
		t.Fatalf("result %v", vals)
	}
	got := strings.Join(yieldsAfter, " ")
	if got != "out after cmp sorted p2 end" {
		t.Fatalf("preempted after the marks %q; want them after each nested loop returned: %q", got, "out after cmp sorted p2 end")
	}
}

// TestTickIgnoresPreemption: a long Go function's interrupt check does
// not raise a Preemption as an error.
func TestTickIgnoresPreemption(t *testing.T) {
	L := NewState()
	defer L.Close()
	in := &Interrupt{}
	in.Check = func(*LState) error { return &Preemption{} }
	in.Flag.Store(1)
	L.SetInterrupt(in)
	L.ticks = 0
	if err := L.DoString(`local s = string.rep("a", 100000); assert(#s == 100000)`); err != nil {
		t.Fatal(err)
	}
}
