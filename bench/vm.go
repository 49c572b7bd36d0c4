package main

// CPU-bound Lua in a luarun process beside the same code in a bare
// gopher-lua state (no context, no interrupt: gopher-lua's fastest loop),
// in the same run: loops, calls and table reads, in vmRounds rounds of
// one run each, the two taking turns at going first. The ratio is the
// median of the rounds' ratios (with the lowest and highest): this
// guest's speed drifts by 10-30 % within seconds, and a lucky fastest
// run on one side moved a fastest-of-7 ratio from 0.91x to 1.38x between
// two runs of the same build. The fastest and median times are shown
// beside it. A luarun process stays
// killable (kill, --max-step, shutdown) through an interrupt flag read
// before each instruction; this shows what that costs.

import (
	"fmt"
	"slices"
	"time"

	lua "github.com/luarun/luarun/lua"
)

// vmLua times one kind of work inside the script (time.monotonic: luarun's
// own, or the Go function the bare state is given).
const vmLua = `
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local work = {
  arith = function(n) local s = 0; for i = 1, n do s = s + i * 2 - 1 end return s end,
  modulo = function(n) local s = 0; for i = 1, n do s = s + i % 7 end return s end,
  calls = function(n) return fib(n) end,
  tables = function(n)
    local t, h, s = {}, {a = 1, b = 2, c = 3}, 0
    for i = 1, 1000 do t[i] = i end
    for _ = 1, n do
      for i = 1, 1000 do s = s + t[i] end
      s = s + h.a + h.b + h.c
    end
    return s
  end,
}
function main(kind, n)
  local t0 = time.monotonic()
  work[kind](n)
  return time.monotonic() - t0
end`

// vmKinds: the kind, what it does, and its size.
var vmKinds = []struct {
	kind, what string
	n          int
}{
	{"arith", "s = s + i * 2 - 1, n iterations", 5000000},
	{"modulo", "s = s + i % 7, n iterations", 5000000},
	{"calls", "fib(n), recursive Lua calls", 27},
	{"tables", "n × 1,000 array reads and 3 field reads", 3000},
}

// vmRounds is how many rounds each kind of work runs, luarun's and the
// bare state's run each round.
const vmRounds = 9

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func vmBench() []row {
	rt := newRuntime(*workers)
	defer shutdown(rt)
	bare := lua.NewState()
	defer bare.Close()
	clock := bare.NewTable()
	start := time.Now()
	clock.RawSetString("monotonic", bare.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(time.Since(start).Seconds()))
		return 1
	}))
	bare.SetGlobal("time", clock)
	check(bare.DoString(vmLua))
	bareRun := func(kind string, n int) float64 {
		check(bare.CallByParam(lua.P{Fn: bare.GetGlobal("main"), NRet: 1, Protect: true}, lua.LString(kind), lua.LNumber(n)))
		defer bare.Pop(1)
		return float64(bare.Get(-1).(lua.LNumber))
	}
	var rows []row
	for _, k := range vmKinds {
		n := k.n
		if *quick && k.kind != "calls" {
			n /= 10
		}
		var lr, br rounds
		luarunRun := func() {
			lr = append(lr, secs(runMain(rt, "vm.lua", vmLua, k.kind, int64(n))[0].(float64)))
		}
		for i := range vmRounds {
			if i%2 == 0 {
				luarunRun()
				br = append(br, secs(bareRun(k.kind, n)))
			} else {
				br = append(br, secs(bareRun(k.kind, n)))
				luarunRun()
			}
		}
		rows = append(rows, row{
			workload: fmt.Sprintf("CPU-bound Lua, %s (n = %d): %d rounds, fastest (median)", k.what, n, vmRounds),
			luarun:   fmt.Sprintf("%s (%s)", fmtDur(slices.Min(lr)), fmtDur(lr.median())),
			baseline: fmt.Sprintf("bare gopher-lua %s (%s)", fmtDur(slices.Min(br)), fmtDur(br.median())), floor: "—",
			ratio:  ratioOf(lr, br) + " bare gopher-lua, median of the rounds' ratios (lowest–highest)",
			target: "≤ 1.1× bare gopher-lua",
		})
	}
	return rows
}
