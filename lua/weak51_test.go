package lua

// Weak tables (weak.go) against lua5.1: the expected outputs are lua5.1's.

import (
	"os/exec"
	"strings"
	"testing"
)

// checkWeak51 is check51, and, where lua5.1 is installed, a check that
// the recorded outputs are still lua5.1's.
func checkWeak51(t *testing.T, cases [][2]string) {
	t.Helper()
	check51(t, cases)
	if _, err := exec.LookPath("lua5.1"); err != nil {
		return
	}
	for _, c := range cases {
		if got := strings.TrimSuffix(lua51Output(t, c[0]), "\n"); got != c[1] {
			t.Errorf("lua5.1 now gives %q, not %q, for\n%s", got, c[1], c[0])
		}
	}
}

func TestWeakKeysAs51(t *testing.T) {
	checkWeak51(t, [][2]string{
		// objects die, strings, numbers and booleans stay (the first
		// two keys sat in the table's own nodes before it grew)
		{`local t = setmetatable({}, {__mode = "k"})
local keep = {}
t[keep] = 1; t[{}] = 2; t[function() end] = 3; t[coroutine.create(function() end)] = 4
t["s"] = {}; t[1] = {}; t[true] = {}; t[2.5] = 5
collectgarbage()
local n = 0 for k, v in pairs(t) do n = n + 1 end
print(n, t[keep], type(t.s), type(t[1]), type(t[true]), t[2.5])`, "5\t1\ttable\ttable\ttable\t5"},
		{`local w = setmetatable({}, {__mode = "k"})
local f = function() end
w[f] = 1 w[1] = 2 w.x = 3
f = nil
collectgarbage()
w.y = 4
local ks = {} for k, v in pairs(w) do ks[#ks+1] = tostring(k) .. v end table.sort(ks)
print(table.concat(ks, " "), #w)`, "12 x3 y4\t1"},
		// no ephemerons: a value that refers to its key keeps it
		{`local t = setmetatable({}, {__mode = "k"})
do local k = {} t[k] = {ref = k} end
do local k = {} t[k] = {} end
collectgarbage()
local n = 0 for k, v in pairs(t) do n = n + 1 assert(v.ref == k) end
print(n)`, "1"},
		// a key removed from a strong table does not keep it alive
		{`local t = {}
local objs = {}
for i = 1, 10 do objs[i] = {} t[objs[i]] = i end
local w = setmetatable({}, {__mode = "k"})
w[objs[1]] = 1
t[objs[1]] = nil
objs[1] = nil
collectgarbage()
print(next(w))`, "nil"},
	})
}

func TestWeakValuesAs51(t *testing.T) {
	checkWeak51(t, [][2]string{
		{`local t = setmetatable({}, {__mode = "v"})
local keep = {}
for i = 1, 10 do t[i] = {} end
t[3] = keep; t.a = {}; t.b = keep; t.s = "str"; t[20] = 20; t.f = function() end; t.u = newproxy()
collectgarbage()
local ks = {} for k in pairs(t) do ks[#ks + 1] = tostring(k) end table.sort(ks)
print(table.concat(ks, " "), t[3] == keep)`, "20 3 b s\ttrue"},
		{`local a = setmetatable({}, {__mode = "v"})
for i = 1, 8 do a[i] = (i <= 4) and i or {} end
collectgarbage()
print(#a, a[5], a[4])`, "4\tnil\t4"},
		{`local t = setmetatable({}, {__mode = "kv"})
local k1, v1 = {}, {}
t[k1] = {}; t[{}] = v1; t.x = {}; t.y = v1; t[{}] = "s"; t.z = "z"
collectgarbage()
local ks = {} for k, v in pairs(t) do ks[#ks + 1] = type(k) .. "=" .. type(v) end table.sort(ks)
print(table.concat(ks, " "))`, "string=string string=table"},
	})
}

// A traversal goes on across collections that remove entries, and across
// its own removals of object keys followed by collections.
func TestWeakTraversalAs51(t *testing.T) {
	checkWeak51(t, [][2]string{
		{`local t = setmetatable({}, {__mode = "v"})
local keep = {}
for i = 1, 20 do t["k" .. i] = (i % 2 == 0) and keep or {} end
local seen = 0
for k, v in pairs(t) do collectgarbage() seen = seen + 1 end
local left = 0 for k in pairs(t) do left = left + 1 end
print(left, seen >= left and seen <= 20)`, "10\ttrue"},
		{`local s = setmetatable({}, {__mode = "k"}) local objs = {}
for i = 1, 30 do objs[i] = {} s[objs[i]] = i end
local visited = 0
for k in pairs(s) do s[k] = nil collectgarbage() visited = visited + 1 end
print(visited, next(s))`, "30\tnil"},
		{`local s = {} local objs = {}
for i = 1, 30 do objs[i] = {} s[objs[i]] = i end
local visited = 0
for k in pairs(s) do s[k] = nil collectgarbage() visited = visited + 1 end
print(visited, next(s))`, "30\tnil"},
		// removed then set again, object keys keep their nodes: the
		// traversal order is the same
		{`local s, objs = {}, {}
for i = 1, 50 do objs[i] = {} s[objs[i]] = i end
local function order() local o = {} for k, v in pairs(s) do o[#o + 1] = v end return table.concat(o, ",") end
local before = order()
for r = 1, 3 do for i = 1, 50, 2 do s[objs[i]] = nil end for i = 1, 50, 2 do s[objs[i]] = i end end
print(order() == before)`, "true"},
	})
}

func TestWeakNestedAs51(t *testing.T) {
	checkWeak51(t, [][2]string{
		{`local outer = setmetatable({}, {__mode = "v"})
local inner = setmetatable({}, {__mode = "k"})
outer[1] = inner
inner[{}] = 1
local keep = {}
inner[keep] = 2
outer[2] = setmetatable({}, {__mode = "k"})
collectgarbage()
local n = 0 for k in pairs(inner) do n = n + 1 end
print(outer[1] == inner, outer[2], n)
inner = nil
collectgarbage()
print(outer[1])`, "true\tnil\t1\nnil"},
	})
}

// __mode is read at each collection from a registered table's metatable:
// removed, it makes the table strong; changed, it changes what is weak.
func TestWeakModeChangesAs51(t *testing.T) {
	checkWeak51(t, [][2]string{
		{`local mt = {__mode = "k"}
local t = setmetatable({}, mt)
t[{}] = 1
mt.__mode = nil
collectgarbage()
print(type(next(t)))
mt.__mode = "v"
t[1] = {}
collectgarbage()
print(type(next(t)), t[1])`, "table\ntable\tnil"},
		{`local t = setmetatable({}, {__mode = "k"})
t[{}] = 1
setmetatable(t, nil)
collectgarbage()
print(type(next(t)))`, "table"},
	})
}

// collectgarbage("step") that ends a cycle clears weak tables too.
func TestWeakStepAs51(t *testing.T) {
	checkWeak51(t, [][2]string{
		{`local t = setmetatable({}, {__mode = "k"})
t[{}] = 1
repeat until collectgarbage("step", 100000)
print(next(t))`, "nil"},
	})
}

// A state that gives no table a metatable with __mode has no weak set:
// collectgarbage does what it did (one Go collection), no more.
func TestNoWeakSetWithoutMode(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`local mt = {__index = {}} for i = 1, 10 do setmetatable({}, mt) end collectgarbage()`); err != nil {
		t.Fatal(err)
	}
	if L.G.weaks() != nil {
		t.Fatal("a weak set without __mode")
	}
	if err := L.DoString(`w = setmetatable({}, {__mode = "k"}) w[{}] = 1 collectgarbage()`); err != nil {
		t.Fatal(err)
	}
	if L.G.weaks() == nil || len(L.G.weaks().tables) != 1 {
		t.Fatal("the weak table is not registered")
	}
	if k, _ := L.GetGlobal("w").(*LTable).Next(LNil); k != LNil {
		t.Fatalf("a dead key survived: %v", k)
	}
}
