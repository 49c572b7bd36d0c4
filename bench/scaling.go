package main

// The scaling workload: how the runtime's throughput grows with its
// workers, from 1 to the machine's CPUs in powers of two, beside
// goroutines doing the same Lua work at the same GOMAXPROCS.
//
// Each point runs with GOMAXPROCS = workers on both sides: with one
// worker at GOMAXPROCS 16 the collector would have fifteen cores to
// itself and the "one worker" time would have used several.
//
// Three shapes of work:
//   - fan-out: 64 CPU-bound processes, no messages (the VM and the
//     scheduler's spreading of runnable processes);
//   - pairs: 512 independent ping-pong pairs (message delivery, wake-ups
//     and stealing, with many more runnable processes than workers);
//   - spawn: 64 processes each starting short-lived children (the
//     spawn path, the allocator, processes ending).

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"
)

const pairsLua = `
function ponger()
  local peer = process.receive()
  while true do
    local v = process.receive()
    process.send(peer, v)
    if v == 0 then return end
  end
end
function pinger(peer, h, boss)
  process.send(peer, process.self())
  for i = h, 0, -1 do
    process.send(peer, i)
    if process.receive() ~= i then error("pair out of order") end
  end
  process.send(boss, "done")
end
function main(pairs, h)
  local me = process.self()
  local t0 = time.monotonic()
  for i = 1, pairs do process.spawn("pinger", process.spawn("ponger"), h, me) end
  for i = 1, pairs do assert(process.receive() == "done") end
  return time.monotonic() - t0
end`

// pairsBaselineLua is pairsLua for baseline A: gproc i is a pinger when
// i is odd, a ponger (its partner is i-1) when even.
const pairsBaselineLua = `
function ponger(peer)
  while true do
    local v = recv()
    send(peer, v)
    if v == 0 then return end
  end
end
function pinger(peer, h)
  for i = h, 0, -1 do
    send(peer, i)
    if recv() ~= i then error("pair out of order") end
  end
end`

// workerCounts is 1, 2, 4, ... up to the machine's CPUs (the last one
// included even when it is not a power of two).
func workerCounts() []int {
	var ws []int
	for w := 1; w < runtime.NumCPU(); w *= 2 {
		ws = append(ws, w)
	}
	return append(ws, runtime.NumCPU())
}

func scaling() []row {
	var rows []row
	var fan1, fanA1, pairs1, pairsA1, spawn1, spawnA1 float64
	for _, w := range workerCounts() {
		fan, fanA := scaleFanOut(w)
		pr, prA := scalePairs(w)
		sp, spA := scaleSpawn(w)
		if w == 1 {
			fan1, fanA1, pairs1, pairsA1, spawn1, spawnA1 = fan, fanA, pr, prA, sp, spA
		}
		rows = append(rows,
			scaleRow(w, "fan-out, 64 CPU-bound processes (work/s)", fan, fanA, fan1, fanA1, "%.2f runs/s"),
			scaleRow(w, "pairs, 512 ping-pong pairs (messages/s)", pr, prA, pairs1, pairsA1, "%.3g msgs/s"),
			scaleRow(w, fmt.Sprintf("spawn, 64 processes start %d short-lived ones (spawns/s)", spawnCount()), sp, spA, spawn1, spawnA1, "%.3g /s"))
	}
	return rows
}

func scaleRow(w int, what string, v, vA, v1, vA1 float64, format string) row {
	return row{
		workload: fmt.Sprintf("scaling, %d workers: %s", w, what),
		luarun:   fmt.Sprintf(format+" (%.2f× 1 worker)", v, v/v1),
		baseline: fmt.Sprintf(format+" (%.2f× GOMAXPROCS 1)", vA, vA/vA1),
		floor:    "—",
		ratio:    fmt.Sprintf("luarun/A %.2f×", v/vA),
		target:   "speedup grows with workers",
	}
}

// withProcs runs f at GOMAXPROCS p.
func withProcs(p int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(p))
	f()
}

// scaleFanOut returns runs per second of the fan-out at w workers, for
// luarun and for baseline A (64 goroutines with their own LStates).
func scaleFanOut(w int) (luarun, baseline float64) {
	procs, iters := 64, size(300000, 50000)
	withProcs(w, func() {
		rt := newRuntime(w)
		t0 := time.Now()
		runMain(rt, "fan.lua", fanLua, int64(procs), int64(iters))
		luarun = 1 / time.Since(t0).Seconds()
		shutdown(rt)

		ps := newGprocs(procs, 1, fanLua)
		done := make(chan error, procs)
		t0 = time.Now()
		for _, p := range ps {
			p.goCall("burn", done, lua.LNumber(iters))
		}
		for range procs {
			check(<-done)
		}
		baseline = 1 / time.Since(t0).Seconds()
		closeAll(ps)
	})
	return luarun, baseline
}

// scalePairs returns messages per second of 512 ping-pong pairs at w
// workers: luarun, and baseline A (goroutines, LStates, channels).
func scalePairs(w int) (luarun, baseline float64) {
	pairs, h := 512, size(2000, 200)
	msgs := float64(pairs * (h + 1) * 2)
	withProcs(w, func() {
		rt := newRuntime(w)
		res := runMain(rt, "pairs.lua", pairsLua, int64(pairs), int64(h))
		luarun = msgs / res[0].(float64)
		shutdown(rt)

		ps := newGprocs(2*pairs, 1, pairsBaselineLua)
		done := make(chan error, 2*pairs)
		t0 := time.Now()
		for i := 0; i < 2*pairs; i += 2 {
			ps[i+1].goCall("ponger", done, lua.LNumber(i+1)) // gprocs are 1-based in send
			ps[i].goCall("pinger", done, lua.LNumber(i+2), lua.LNumber(h))
		}
		for range 2 * pairs {
			check(<-done)
		}
		baseline = msgs / time.Since(t0).Seconds()
		closeAll(ps)
	})
	return luarun, baseline
}

// spawnsLua: 64 spawner processes each start k children that return at
// once; the time is until every spawner has started all of its children.
const spawnsLua = `
function child() end
function spawner(k, boss)
  for i = 1, k do process.spawn("child") end
  process.send(boss, "done")
end
function main(s, k)
  local me = process.self()
  local t0 = time.monotonic()
  for i = 1, s do process.spawn("spawner", k, me) end
  for i = 1, s do assert(process.receive() == "done") end
  return time.monotonic() - t0
end`

// scaleSpawn returns spawns per second at w workers: 64 luarun processes
// each spawning short-lived children, and baseline A: 64 goroutines each
// starting goroutines that make an LState and run a Lua function (10×
// fewer: each makes a whole state).
func scaleSpawn(w int) (luarun, baseline float64) {
	spawners, n := 64, spawnCount()
	k, kA := n/spawners, n/spawners/10
	withProcs(w, func() {
		rt := newRuntime(w)
		res := runMain(rt, "spawns.lua", spawnsLua, int64(spawners), int64(k))
		luarun = float64(spawners*k) / res[0].(float64)
		shutdown(rt)

		var wg sync.WaitGroup
		t0 := time.Now()
		for range spawners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range kA {
					wg.Add(1)
					go func() {
						defer wg.Done()
						L := lua.NewState()
						defer L.Close()
						check(L.DoString(`local function child() end child()`))
					}()
				}
			}()
		}
		wg.Wait()
		baseline = float64(spawners*kA) / time.Since(t0).Seconds()
	})
	return luarun, baseline
}

func spawnCount() int { return size(128000, 12800) }
