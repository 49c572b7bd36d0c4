package lua

import (
	"strconv"
	"testing"
)

// Table benchmarks: each runs a Lua loop of b.N iterations in one call, so
// that the figures are the VM's table paths (fields, arrays, pairs,
// constructors), not the cost of calling into Lua.

func benchLua(b *testing.B, setup string) {
	b.Helper()
	L := NewState()
	defer L.Close()
	if err := L.DoString(setup); err != nil {
		b.Fatal(err)
	}
	run := L.GetGlobal("run")
	b.ReportAllocs()
	b.ResetTimer()
	if err := L.CallByParam(P{Fn: run, NRet: 0, Protect: true}, LNumber(b.N)); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkTableRecordCreate(b *testing.B) {
	benchLua(b, `function run(n) local t for i = 1, n do t = {x = i, y = 2, z = 3} end return t end`)
}

func BenchmarkTableEmptyThenFields(b *testing.B) {
	benchLua(b, `function run(n) local t for i = 1, n do t = {} t.x = i t.y = 2 t.z = 3 end return t end`)
}

func BenchmarkTableFieldRead(b *testing.B) {
	benchLua(b, `local t = {x = 1, y = 2, z = 3}
function run(n) local s = 0 for i = 1, n do s = s + t.x + t.y + t.z end return s end`)
}

func BenchmarkTableFieldWrite(b *testing.B) {
	benchLua(b, `local t = {x = 1, y = 2, z = 3}
function run(n) for i = 1, n do t.x = i t.y = i t.z = i end end`)
}

// BenchmarkTableFieldRead20 reads fields of a table of 20 fields (past
// any small-table scan).
func BenchmarkTableFieldRead20(b *testing.B) {
	benchLua(b, `local t = {}
for i = 1, 20 do t["field" .. i] = i end
function run(n) local s = 0 for i = 1, n do s = s + t.field1 + t.field7 + t.field20 end return s end`)
}

func BenchmarkTableGlobalRead(b *testing.B) {
	benchLua(b, `x1, x2 = 1, 2
function run(n) local s = 0 for i = 1, n do s = s + x1 + x2 end return s end`)
}

// BenchmarkTableArrayAppend: per op, 100 appends t[i] = i to a new table.
func BenchmarkTableArrayAppend(b *testing.B) {
	benchLua(b, `function run(n) local t for i = 1, n do t = {} for j = 1, 100 do t[j] = j end end return t end`)
}

// BenchmarkTableArrayAppendLen: per op, 100 appends t[#t+1] = i.
func BenchmarkTableArrayAppendLen(b *testing.B) {
	benchLua(b, `function run(n) local t for i = 1, n do t = {} for j = 1, 100 do t[#t + 1] = j end end return t end`)
}

// BenchmarkTableArrayRead: per op, 1000 reads t[j].
func BenchmarkTableArrayRead(b *testing.B) {
	benchLua(b, `local t = {} for j = 1, 1000 do t[j] = j end
function run(n) local s = 0 for i = 1, n do for j = 1, 1000 do s = s + t[j] end end return s end`)
}

func BenchmarkTableArrayWrite(b *testing.B) {
	benchLua(b, `local t = {} for j = 1, 1000 do t[j] = j end
function run(n) for i = 1, n do for j = 1, 1000 do t[j] = i end end end`)
}

func BenchmarkTableIpairs1000(b *testing.B) {
	benchLua(b, `local t = {} for j = 1, 1000 do t[j] = j end
function run(n) local s = 0 for i = 1, n do for _, v in ipairs(t) do s = s + v end end return s end`)
}

func BenchmarkTablePairs8(b *testing.B) {
	benchLua(b, `local t = {a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8}
function run(n) local s = 0 for i = 1, n do for k, v in pairs(t) do s = s + v end end return s end`)
}

func BenchmarkTablePairs1000(b *testing.B) {
	benchLua(b, `local t = {} for j = 1, 1000 do t["k" .. j] = j end
function run(n) local s = 0 for i = 1, n do for k, v in pairs(t) do s = s + v end end return s end`)
}

func BenchmarkTablePairsArray1000(b *testing.B) {
	benchLua(b, `local t = {} for j = 1, 1000 do t[j] = j end
function run(n) local s = 0 for i = 1, n do for k, v in pairs(t) do s = s + v end end return s end`)
}

// BenchmarkTableStringMap100k: per op, 100,000 string keys inserted into
// a new table, then each looked up.
func BenchmarkTableStringMap100k(b *testing.B) {
	benchLua(b, `local keys = {} for j = 1, 100000 do keys[j] = "key" .. j end
function run(n) local s = 0 for i = 1, n do
  local t = {}
  for j = 1, 100000 do t[keys[j]] = j end
  for j = 1, 100000 do s = s + t[keys[j]] end
end return s end`)
}

// BenchmarkTableIntMap: per op, 1000 sparse integer keys set and read.
func BenchmarkTableIntMap(b *testing.B) {
	benchLua(b, `function run(n) local s = 0 for i = 1, n do
  local t = {}
  for j = 1, 1000 do t[j * 7919] = j end
  for j = 1, 1000 do s = s + t[j * 7919] end
end return s end`)
}

// Go API: the calls luarun's libraries make.
func BenchmarkTableGoRawGetString(b *testing.B) {
	tb := newLTable(0, 0)
	for _, k := range []string{"x", "y", "z"} {
		tb.RawSetString(k, LNumber(1))
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = tb.RawGetString("z")
	}
}

func BenchmarkTableGoRawGetString40(b *testing.B) {
	tb := newLTable(0, 0)
	for i := 0; i < 40; i++ {
		tb.RawSetString("name"+strconv.Itoa(i), LNumber(1))
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = tb.RawGetString("name33")
	}
}

func BenchmarkTableGoNewFill(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tb := newLTable(0, 0)
		tb.RawSetString("type", LString("x"))
		tb.RawSetString("id", LNumber(1))
		tb.RawSetInt(1, LTrue)
	}
}

// BenchmarkTableObjects: per op, an object made as setmetatable({}, C)
// with two fields set, and three method calls through __index (two of
// which write fields).
func BenchmarkTableObjects(b *testing.B) {
	benchLua(b, `local Point = {}
Point.__index = Point
function Point.new(x, y) local self = setmetatable({}, Point) self.x = x self.y = y return self end
function Point:add(o) return Point.new(self.x + o.x, self.y + o.y) end
function Point:len2() return self.x * self.x + self.y * self.y end
function Point:scale(k) self.x = self.x * k self.y = self.y * k return self end
function run(n) local acc, s = Point.new(0, 0), 0
  for i = 1, n do
    local p = Point.new(i, 1)
    acc = acc:add(p)
    s = s + p:len2() + acc:scale(0.5):len2()
  end
  return s
end`)
}
