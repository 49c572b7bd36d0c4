package luaproc

// Go benchmarks of bench/vm.go's CPU-bound workloads and bench/stdlib.go's
// library idioms, run in a luarun process: what the harness's VM and
// stdlib rows time, in a form `go test -bench` (and callgrind, counting
// instructions per op by the difference of two -test.benchtime=Nx runs)
// can take. Each op is one unit of the workload at a fixed size (named
// in the sub-benchmark), so that ns/op and instructions/op do not depend
// on b.N much; the inputs are made once a run, inside the script (their
// cost amortized over b.N, and cancelled in a difference of two runs).

import (
	"testing"

	"github.com/luarun/luarun/bench/idioms"
)

// vmBenchLua: main(kind, reps) runs reps units of kind.
const vmBenchLua = `
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t, h = {}, {a = 1, b = 2, c = 3}
for i = 1, 1000 do t[i] = i end
local work = {
  -- one loop iteration a unit
  arith = function(n) local s = 0; for i = 1, n do s = s + i * 2 - 1 end return s end,
  modulo = function(n) local s = 0; for i = 1, n do s = s + i % 7 end return s end,
  -- fib(15) a unit: 1,973 recursive Lua calls
  calls = function(n) local s = 0; for _ = 1, n do s = s + fib(15) end return s end,
  -- 1,000 array reads and 3 field reads a unit
  tables = function(n)
    local s = 0
    for _ = 1, n do
      for i = 1, 1000 do s = s + t[i] end
      s = s + h.a + h.b + h.c
    end
    return s
  end,
}
function main(kind, n) return work[kind](n) end`

// BenchmarkVM: bench/vm.go's workloads (arith, modulo: per loop
// iteration; calls: per fib(15); tables: per 1,000 array reads).
func BenchmarkVM(b *testing.B) {
	for _, kind := range []string{"arith", "modulo", "calls", "tables"} {
		b.Run(kind, func(b *testing.B) {
			rt := benchRuntime(b)
			b.ReportAllocs()
			b.ResetTimer()
			runBench(b, rt, vmBenchLua, "main", kind, int64(b.N))
		})
	}
}

// stdlibBenchLua: the harness's idioms (bench/idioms), each made once at
// its size (main's size) and run reps times. sort sorts a fresh copy each
// time (a sorted array is not the idiom); lines is not run (it writes and
// removes a file: I/O, not the library).
const stdlibBenchLua = idioms.Lua + `
-- a sorted array is not the idiom: each run sorts a fresh copy
idioms.sort = function(n)
  local t, x = {}, 42
  for i = 1, n do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end
  return function()
    local u = {}
    for i = 1, n do u[i] = t[i] end
    table.sort(u)
    return u[1]
  end
end
function main(idiom, size, reps)
  local run = idioms[idiom](size)
  for _ = 1, reps do run() end
end`

// stdlibBenchSizes: each idiom's size, one op being one run at it — a
// hundredth of bench/stdlib.go's n (its lines of ~50 bytes, items, calls).
var stdlibBenchSizes = []struct {
	idiom string
	size  int
}{
	{"gsub", 200}, {"find", 200}, {"match", 200}, {"gmatch", 200}, {"upper", 200},
	{"concat", 2000}, {"sort", 1000}, {"format", 2000}, {"insert_remove", 3000},
	{"sub_byte", 3000}, {"empty_call", 3000},
}

// BenchmarkStdlib: bench/stdlib.go's idioms, per run of the idiom at its
// size in stdlibBenchSizes.
func BenchmarkStdlib(b *testing.B) {
	for _, id := range stdlibBenchSizes {
		b.Run(id.idiom, func(b *testing.B) {
			rt := benchRuntime(b)
			b.ReportAllocs()
			b.ResetTimer()
			runBench(b, rt, stdlibBenchLua, "main", id.idiom, int64(id.size), int64(b.N))
		})
	}
}
