package lua

import (
	"fmt"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// luarun: tables laid out as Lua 5.1's (table.go). Each case runs in
// lua5.1 (skipped where it is not installed) and here, and what they print
// must be the same: the order pairs and next visit the keys, and #t of
// tables with holes.

// table51Prelude prints tables: show(t) writes the pairs in traversal
// order and #t.
const table51Prelude = `
local function r(x)
  if type(x) == "string" then return string.format("%q", x) end
  if type(x) == "table" then return "{}" end
  return tostring(x)
end
function show(t)
  local o = {}
  for k, v in pairs(t) do o[#o + 1] = r(k) .. "=" .. r(v) end
  print("#" .. #t, table.concat(o, " "))
end
`

func lua51Output(t *testing.T, src string) string {
	t.Helper()
	out, err := exec.Command("lua5.1", "-e", src).CombinedOutput()
	if err != nil {
		t.Fatalf("lua5.1: %v\n%s\n%s", err, out, src)
	}
	return string(out)
}

func compareWith51(t *testing.T, cases map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("lua5.1"); err != nil {
		t.Skip("lua5.1 is not installed")
	}
	for name, body := range cases {
		src := table51Prelude + body
		want := lua51Output(t, src)
		got := run51(t, src)
		if got != want {
			t.Errorf("%s:\n%s\n--- lua5.1:\n%s--- luarun:\n%s", name, body, want, got)
		}
	}
}

func TestTableTraversalAs51(t *testing.T) {
	compareWith51(t, map[string]string{
		"serpent": `show({'a', nil, nil, [9] = 'i', 'f', [5] = 'g', [7] = {}})`,
		"dkjson":  `show({[1] = "a", [5] = "c", ["x"] = "x"}) show({[1] = "a", [1000] = "x"})`,
		"record":  `show({x = 1, y = 2, z = 3}) show({name = "n", age = 3, email = "e", id = 7, admin = false})`,
		"fields one by one": `
local t = {}
for _, k in ipairs({"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"}) do
  t[k] = #k
  show(t)
end`,
		"many strings": `
local t = {}
for i = 1, 100 do t["k" .. i] = i end
show(t)
local u = {}
for i = 1, 40 do u[string.rep("x", i) .. "long key past the thirty-second character " .. i] = i end
show(u)`,
		"integers in and out of the array": `
local t = {}
for _, i in ipairs({5, 3, 8, 1, 2, 100, 7, 6, 4, 0, -1, 64, 33, 17}) do t[i] = i show(t) end`,
		"reverse fill": `local t = {} for i = 20, 1, -1 do t[i] = i end show(t)`,
		"sparse":       `local t = {} for i = 1, 50 do t[i * i] = i end show(t)`,
		"floats":       `show({[1.5] = 1, [2.25] = 2, [-1] = 3, [0] = 4, [1e10] = 5, [-0.5] = 6, [3] = 7, [1e300] = 8, [-1e-300] = 9})`,
		"booleans":     `show({[true] = 1, [false] = 2, x = 3, [1] = 4}) show({[false] = 1}) local t = {} t[true] = 1 t.a = 2 t[false] = 3 t[2] = 4 show(t)`,
		"mixed": `
local t = {10, 20, 30, a = 1, b = 2, [10] = 100, [2.5] = "f", [true] = "t"}
t.c = 3 t[4] = 40 t[5] = 50 t.d = 4 t[100] = 1
show(t)`,
		"deletions during traversal": `
local t = {}
for i = 1, 30 do t["k" .. i] = i t[i * 3] = i end
for k, v in pairs(t) do if v % 2 == 0 then t[k] = nil end end
show(t)
for k, v in pairs(t) do t[k] = v * 2 end
show(t)
for k in pairs(t) do t[k] = nil end
show(t)
t.new = 1 t[1] = 1
show(t)`,
		"delete then re-add": `
local t = {a = 1, b = 2, c = 3, d = 4}
t.b = nil t.e = 5 show(t)
t.b = 6 show(t)
t.a = nil t.c = nil t.f = 7 t.g = 8 t.h = 9 show(t)`,
		"next": `
local t = {1, 2, x = "x", y = "y", [7] = 7}
local o, k, v = {}, next(t)
while k do o[#o + 1] = tostring(k) k, v = next(t, k) end
print(table.concat(o, " "))
print(next({}), next({}, nil), next({5}))`,
		"growth through rehash": `
local t = {}
for i = 1, 40 do
  if i % 3 == 0 then t[i] = i elseif i % 3 == 1 then t["s" .. i] = i else t[i + 0.5] = i end
  if i % 5 == 0 then show(t) end
end`,
		"constructors": `
show({1, 2, 3, x = 1, 4, 5, [20] = 1})
show({x = 1, y = 2, [1] = 1, [2] = 2, [3] = 3})
local function f(...) return {...} end
show(f(1, 2, 3)) show(f(1, nil, 3)) show(f(nil, nil, nil, 4))
local big = {} for i = 1, 120 do big[i] = i end
show({unpack(big)})
show({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, nil, nil, nil, nil, 65, k = 1})`,
		"globals-like": `
local t = {}
for _, k in ipairs({"string", "xpcall", "package", "tostring", "print", "os", "unpack", "require", "getfenv", "setmetatable", "next", "assert", "tonumber", "io", "rawequal", "collectgarbage", "getmetatable", "module", "rawset", "math", "debug", "pcall", "table", "newproxy", "type", "coroutine", "_G", "select", "gcinfo", "pairs", "rawget", "loadstring", "ipairs", "_VERSION", "dofile", "setfenv", "load", "error", "loadfile"}) do t[k] = 1 end
show(t)`,
	})
}

func TestTableBorderAs51(t *testing.T) {
	compareWith51(t, map[string]string{
		"constructors": `
print(#{1, 2, nil, 4}, #{1, nil}, #{nil, nil, 3}, #{nil}, #{1, 2, 3, nil}, #{n = 1, 1, 2, nil, 4})
print(#{1, nil, 3, nil, 5, nil, 7, nil}, #{nil, 2, nil, 4, nil, 6, nil, 8, nil})
print(#{'a', nil, nil, [9] = 'i', 'f', [5] = 'g', [7] = {}})`,
		"assignments": `
local t = {} t[1] = 1 t[2] = 2 t[4] = 4 print(#t)
t = {} t[10] = nil t[9] = 10 t[8] = nil t[7] = 10 print(#t)
t = {} for i = 10, 1, -1 do t[i] = i end t[5] = nil print(#t) t[10] = nil print(#t)
t = {} t[1] = 1 t[2] = 2 t[3] = 3 t[1] = nil t[2] = nil print(#t)
t = {} for i = 1, 16 do t[i] = i end t[16] = nil t[8] = nil print(#t) t[17] = 17 print(#t)
t = {x = 1, y = 2, z = 3} t[1] = 1 print(#t) t[2] = 2 t[4] = 4 print(#t) t[3] = 3 t[5] = 5 t[6] = 6 print(#t)
t = {} for i = 1, 100 do t[i] = i end for i = 1, 100, 3 do t[i] = nil end print(#t)
t = {} for i = 1, 5 do t[i * 2] = i end print(#t) t[1] = 0 print(#t)`,
		"table.insert and remove": `
local t = {}
for i = 1, 10 do table.insert(t, i) end print(#t)
table.insert(t, 1, 0) print(#t, t[1], t[11])
t[5] = nil print(#t) table.insert(t, "x") print(#t)
print(table.remove(t), #t, table.remove(t, 1), #t)
t[#t + 2] = "gap" print(#t) table.insert(t, 15, "far") print(#t)
local u = {1, 2, 3} u[5] = 5 print(#u) table.remove(u) print(#u)`,
		"sort": `
local t = {} t.x = 1 t.y = 2 t.z = 3 t[1] = 5 t[2] = 3 t[3] = 4 t[4] = 1
table.sort(t) print(#t, t[1], t[2], t[3], t[4])
local u = {5, 2, 8, 1, 9, 3} table.sort(u, function(a, b) return a > b end) print(table.concat(u, " "))`,
	})
}

// TestTableRandomOpsAs51 runs sequences of writes, removals, appends and
// borders, made here from fixed seeds, in lua5.1 and here: the borders and
// traversal orders printed must be the same (the array part's border kept
// by LTable.border, the append fast path and rehash sizes against 5.1's).
func TestTableRandomOpsAs51(t *testing.T) {
	cases := map[string]string{}
	for seed := int64(1); seed <= 12; seed++ {
		rnd := rand.New(rand.NewSource(seed))
		var b strings.Builder
		for tbl := 0; tbl < 8; tbl++ {
			if rnd.Intn(3) == 0 {
				b.WriteString("local s, t = '', {x = 1, 1, 2, 3}\n")
			} else {
				b.WriteString("local s, t = '', {}\n")
			}
			span := 4 + rnd.Intn(60)
			for op := 0; op < 150; op++ {
				k := 1 + rnd.Intn(span)
				switch r := rnd.Intn(20); {
				case r < 6:
					b.WriteString("t[#t + 1] = " + strconv.Itoa(op) + "\n")
				case r < 10:
					fmt.Fprintf(&b, "t[%d] = %d\n", k, op)
				case r < 13:
					fmt.Fprintf(&b, "t[%d] = nil\n", k)
				case r < 15:
					fmt.Fprintf(&b, "t[\"k%d\"] = %d\n", k%12, op)
				case r < 16:
					fmt.Fprintf(&b, "t[\"k%d\"] = nil\n", k%12)
				case r < 17:
					b.WriteString("table.remove(t)\n")
				case r < 18:
					fmt.Fprintf(&b, "t[%d.5] = %d t[%v] = true\n", k, op, rnd.Intn(2) == 0)
				default:
					b.WriteString("s = s .. #t .. ' '\n")
				}
			}
			b.WriteString("print(s) show(t)\n")
		}
		cases["seed "+strconv.FormatInt(seed, 10)] = "do\n" + b.String() + "end"
	}
	compareWith51(t, cases)
}

// TestTableFieldGrowthAs51: tables made by {} and filled key by key, whose
// one node grows to two without a rehash (grow2): every pair of keys from
// a list with both hash parities, booleans and a float, then a third and
// fourth key (lastfree as 5.1 leaves it), and a removed first key.
func TestTableFieldGrowthAs51(t *testing.T) {
	compareWith51(t, map[string]string{
		"pairs": `
local keys = {"x", "y", "z", "a", "bb", "name", "id", "type", true, false, 2.5, -0.5}
for _, k1 in ipairs(keys) do
  for _, k2 in ipairs(keys) do
    if k1 ~= k2 then
      local t = {} t[k1] = 1 t[k2] = 2 show(t)
      t.third = 3 show(t) t.fourth = 4 show(t)
      local u = setmetatable({}, {}) u[k1] = 1 u[k1] = nil u[k2] = 2 u.w = 3 show(u)
      local v = {} v[k1] = 1 v[k2] = 2 v[k1] = nil v.q = 3 v.r = 4 show(v)
    end
  end
end`,
	})
}

// TestTableConstructorSizesAs51: OP_NEWTABLE's sizes are luac5.1's (a
// last call or ... counts as neither a list item nor a field: the hash
// part of {n = select("#", ...), ...} is one node, not two).
func TestTableConstructorSizesAs51(t *testing.T) {
	src := "local a = {f()}\nlocal b = {1, 2, ...}\nlocal c = {x=1, f()}\nlocal d = {f(), x = 1}\nlocal e = {x=1, y=2, ...}\n"
	want := [][2]int{{0, 0}, {2, 0}, {0, 1}, {1, 1}, {0, 2}} // luac5.1 -l
	proto := compileString(t, src, "sizes")
	var got [][2]int
	for _, inst := range proto.Code {
		if opGetOpCode(inst) == OP_NEWTABLE {
			got = append(got, [2]int{opGetArgB(inst), opGetArgC(inst)})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("NEWTABLE B, C: got %v, lua5.1 %v", got, want)
	}
	compareWith51(t, map[string]string{
		"call last": `
local function none() end
local function three() return 1, 2, 3 end
local t = {a = 1, none()} t.a = nil t.b = 2 t.c = 3 show(t)
local u = {three()} u.x = 1 u[4] = 4 u.y = 2 show(u) print(#u)
local function pack(...) return {n = select("#", ...), ...} end
local p = pack() p.k1 = 1 p.n = nil p.k2 = 2 p.k3 = 3 show(p)`,
	})
}
