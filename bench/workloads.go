package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/luarun/luarun/bench/idioms"
	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/luaproc"
)

const ringBaselineLua = `
function node(next_i)
  while true do
    local token = recv()
    if token < 0 then return end
    if token == 0 then done() else send(next_i, token - 1) end
  end
end`

func ring() []row {
	n, m := size(1000, 200), size(1000000, 100000)
	floor := floorRoundTrip(size(2000000, 200000))

	rt := newRuntime(*workers)
	res := runMain(rt, "ring.lua", idioms.Ring, int64(n), int64(m))
	shutdown(rt)
	luarun := time.Duration(res[0].(float64) * float64(time.Second) / float64(m))

	ps := newGprocs(n, 1, ringBaselineLua)
	finished := make(chan struct{})
	for _, p := range ps {
		p.L.SetGlobal("done", p.L.NewFunction(func(*lua.LState) int { close(finished); return 0 }))
	}
	exited := make(chan error, n)
	for i, p := range ps {
		p.goCall("node", exited, lua.LNumber((i+1)%n+1)) // its successor, 1-based
	}
	t0 := time.Now()
	ps[0].inbox <- lua.LNumber(m)
	<-finished
	baseline := time.Since(t0) / time.Duration(m)
	for _, p := range ps {
		p.inbox <- lua.LNumber(-1)
	}
	for range n {
		check(<-exited)
	}
	closeAll(ps)
	plain := goRing(n, m)

	return []row{{
		workload: fmt.Sprintf("ring: %d processes pass a token %d hops (per hop)", n, m),
		luarun:   fmtDur(luarun), baseline: fmtDur(baseline),
		floor:  fmtDur(floor) + " (resume/yield); no Lua, " + fmtDur(plain) + " (goroutines + channels)",
		ratio:  fmt.Sprintf("%.2f× floor; A/luarun %.1f×", float64(luarun)/float64(floor), float64(baseline)/float64(luarun)),
		target: "≤ 1.6× floor; A/luarun ≥ 4×",
	}}
}

// goRing is the ring with no Lua at all: n goroutines pass an int over
// unbuffered channels. It is what the hop between 1,000 distinct stacks
// costs on this machine before any interpreter runs.
func goRing(n, m int) time.Duration {
	chans := make([]chan int, n)
	for i := range chans {
		chans[i] = make(chan int)
	}
	done := make(chan struct{})
	for i := range chans {
		in, out := chans[i], chans[(i+1)%n]
		go func() {
			for token := range in {
				switch {
				case token < 0:
					return
				case token == 0:
					close(done)
				default:
					out <- token - 1
				}
			}
		}()
	}
	t0 := time.Now()
	chans[0] <- m
	<-done
	d := time.Since(t0) / time.Duration(m)
	for _, c := range chans {
		c <- -1
	}
	return d
}

func yieldRoundTrip() []row {
	n := size(2000000, 200000)
	floor := floorRoundTrip(n)
	rt := newRuntime(*workers)
	rt.Register("bench.sync", func(c luaproc.Call) error { c.Complete(nil); return nil })
	s, err := rt.LoadString("yield.lua", `function main(n) for i = 1, n do bench.sync() end end`)
	check(err)
	t0 := time.Now()
	h, err := rt.Start(context.Background(), s, "main", int64(n))
	check(err)
	_, err = h.Wait(context.Background())
	check(err)
	luarun := time.Since(t0) / time.Duration(n)
	shutdown(rt)
	return []row{{
		workload: "yield round trip: Lua calls a command Go completes at once (in its handler: the call returns without yielding)",
		luarun:   fmtDur(luarun), baseline: "—", floor: fmtDur(floor),
		ratio:  fmt.Sprintf("%.2f× floor", float64(luarun)/float64(floor)),
		target: "≤ 1.5× floor",
	}}
}

const idleLua = `function main() process.receive() end`

// requireLua is idleLua requiring a module first: requireMod, a file
// next to it, compiled by the first process and run by every process.
const (
	requireLua = `function main() local m = require("mod"); process.receive() end`
	requireMod = `local M = {}
function M.add(a, b) return a + b end
function M.sub(a, b) return a - b end
return M
`
)

// spawn starts n idle luarun processes and baseline-A processes (fewer:
// each holds a full LState) and reports time and heap per process; and n
// processes that each require a module first, beside the idle ones: the
// two alternate for a warm-up round and three more (a fresh runtime
// each), and the medians of the three are reported.
func spawn() []row {
	n, nA := size(100000, 10000), size(10000, 2000)
	dir, err := os.MkdirTemp("", "luarun-bench")
	check(err)
	defer os.RemoveAll(dir)
	check(os.WriteFile(filepath.Join(dir, "mod.lua"), []byte(requireMod), 0o644))
	check(os.WriteFile(filepath.Join(dir, "main.lua"), []byte(requireLua), 0o644))

	var idleTs, requireTs []time.Duration
	var idleHeaps, requireHeaps []float64
	var compiled int64
	for range 4 { // round 0 warms the Go heap up: see cold below
		rt := newRuntime(*workers)
		s, err := rt.LoadString("idle.lua", idleLua)
		check(err)
		t, heap := startIdle(rt, s, n)
		shutdown(rt)
		idleTs, idleHeaps = append(idleTs, t), append(idleHeaps, heap)

		rt = newRuntime(*workers)
		s, err = rt.LoadFile(filepath.Join(dir, "main.lua"))
		check(err)
		t, heap = startIdle(rt, s, n)
		compiled = rt.Stats().ScriptsCompiled
		shutdown(rt)
		requireTs, requireHeaps = append(requireTs, t), append(requireHeaps, heap)
	}
	// The first round runs on a heap that has never held 100,000
	// processes: the Go runtime maps and faults in ~1 GB as it goes, which
	// more than doubles the time per process. It is reported apart.
	cold := idleTs[0]
	idleTs, requireTs, idleHeaps, requireHeaps = idleTs[1:], requireTs[1:], idleHeaps[1:], requireHeaps[1:]
	spawnT, heap := median(idleTs), medianF(idleHeaps)
	requireT, requireHeap := median(requireTs), medianF(requireHeaps)

	stop, ready := make(chan struct{}), make(chan struct{}, nA)
	var wg sync.WaitGroup
	before := heapAfterGC()
	t0 := time.Now()
	for range nA {
		wg.Add(1)
		go func() {
			defer wg.Done()
			L := lua.NewState()
			defer L.Close()
			L.SetGlobal("recv", L.NewFunction(func(*lua.LState) int { ready <- struct{}{}; <-stop; return 0 }))
			L.DoString(`recv()`)
		}()
	}
	for range nA {
		<-ready
	}
	spawnA := time.Since(t0) / time.Duration(nA)
	heapA := float64(heapAfterGC()-before) / float64(nA)
	close(stop)
	wg.Wait()

	return []row{
		{
			workload: fmt.Sprintf("spawn: start %d processes that wait in receive, median of 3 after a warm-up (each)", n),
			luarun:   fmtDur(spawnT) + " (cold, first round: " + fmtDur(cold) + ")", baseline: fmtDur(spawnA) + fmt.Sprintf(" (at %d)", nA), floor: "—",
			ratio:  fmt.Sprintf("A/luarun %.1f×", float64(spawnA)/float64(spawnT)),
			target: "≤ 10 µs",
		},
		{
			workload: fmt.Sprintf("memory: heap per idle process at %d (HeapAlloc after GC, delta)", n),
			luarun:   fmtBytes(heap), baseline: fmtBytes(heapA) + fmt.Sprintf(" (at %d)", nA), floor: "—",
			ratio:  fmt.Sprintf("A/luarun %.1f×", heapA/heap),
			target: "≤ 16 KB",
		},
		{
			workload: fmt.Sprintf("spawn + require of a module file compiled once (%d compiles in its runtime): %d processes, median of 3 (each)", compiled, n),
			luarun:   fmtDur(requireT) + ", " + fmtBytes(requireHeap),
			baseline: "spawn row: " + fmtDur(spawnT) + ", " + fmtBytes(heap), floor: "—",
			ratio:  fmt.Sprintf("require adds %s, %s", fmtDur(requireT-spawnT), fmtBytes(requireHeap-heap)),
			target: "spawn row not slower",
		},
	}
}

// startIdle starts n processes of s (entry main) that wait in receive,
// and returns the time per process until all wait and the heap each
// holds; then it ends them.
func startIdle(rt *luaproc.Runtime, s *luaproc.Script, n int) (time.Duration, float64) {
	before := heapAfterGC()
	steps := rt.SchedulerStats().Steps
	t0 := time.Now()
	hs := make([]luaproc.Handle, n)
	for i := range hs {
		var err error
		hs[i], err = rt.Start(context.Background(), s, "main")
		check(err)
	}
	for rt.SchedulerStats().Steps < steps+uint64(n) {
		time.Sleep(100 * time.Microsecond)
	}
	perProc := time.Since(t0) / time.Duration(n)
	heap := float64(heapAfterGC()-before) / float64(n)
	for _, h := range hs {
		rt.Send(h.PID(), true)
	}
	for _, h := range hs {
		_, err := h.Wait(context.Background())
		check(err)
	}
	return perProc, heap
}

const fanLua = `
function burn(n)
  local x = 0
  for i = 1, n do x = (x + i * i) % 1000003 end
  return x
end
function main(procs, n)
  local pids = {}
  for i = 1, procs do pids[i] = process.spawn("burn", n) end
  for i = 1, procs do assert(process.wait(pids[i])) end
end`

func fanOut() []row {
	procs, iters := 64, size(300000, 50000)
	// Both sides run at GOMAXPROCS = workers: with 1 worker at GOMAXPROCS
	// 2 the garbage collector would have the second core to itself, and
	// the "1 core" time would have used two.
	run := func(w int) time.Duration {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(w))
		rt := newRuntime(w)
		t0 := time.Now()
		runMain(rt, "fan.lua", fanLua, int64(procs), int64(iters))
		d := time.Since(t0)
		shutdown(rt)
		return d
	}
	// Baseline A: the same Lua in 64 goroutines with their own states, at
	// GOMAXPROCS 1 and 2.
	runA := func(p int) time.Duration {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(p))
		ps := newGprocs(procs, 1, fanLua)
		done := make(chan error, procs)
		t0 := time.Now()
		for _, p := range ps {
			p.goCall("burn", done, lua.LNumber(iters))
		}
		for range procs {
			check(<-done)
		}
		d := time.Since(t0)
		closeAll(ps)
		return d
	}
	one, two := run(1), run(2)
	oneA, twoA := runA(1), runA(2)
	return []row{{
		workload: fmt.Sprintf("CPU fan-out: %d CPU-bound processes, 2 workers vs 1", procs),
		luarun:   fmt.Sprintf("%v vs %v: %.2f×", two.Round(time.Millisecond), one.Round(time.Millisecond), float64(one)/float64(two)),
		baseline: fmt.Sprintf("%v vs %v: %.2f× (GOMAXPROCS 2 vs 1)", twoA.Round(time.Millisecond), oneA.Round(time.Millisecond), float64(oneA)/float64(twoA)),
		floor:    "—",
		ratio:    fmt.Sprintf("speedup %.2f× (A: %.2f×)", float64(one)/float64(two), float64(oneA)/float64(twoA)),
		target:   "≥ 1.8×",
	}}
}

const streamLua = `
function consumer(n, boss)
  for i = 1, n do
    local v = process.receive()
    if v ~= i then error("got " .. tostring(v) .. ", want " .. i) end
  end
  process.send(boss, "done")
end
function main(n)
  local c = process.spawn("consumer", n, process.self())
  local t0 = time.monotonic()
  for i = 1, n do process.send(c, i) end
  assert(process.receive() == "done")
  return time.monotonic() - t0
end`

const streamBaselineLua = `
function producer(n) for i = 1, n do send(2, i) end end
function consumer(n)
  for i = 1, n do
    local v = recv()
    if v ~= i then error("got " .. tostring(v) .. ", want " .. i) end
  end
end`

func throughput() []row {
	n := size(1000000, 100000)
	rt := newRuntime(*workers)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res := runMain(rt, "stream.lua", streamLua, int64(n))
	runtime.ReadMemStats(&m1)
	shutdown(rt)
	luarun := res[0].(float64)
	allocs := float64(m1.Mallocs-m0.Mallocs) / float64(n)

	ps := newGprocs(2, 1024, streamBaselineLua)
	done := make(chan error, 2)
	t0 := time.Now()
	ps[1].goCall("consumer", done, lua.LNumber(n))
	ps[0].goCall("producer", done, lua.LNumber(n))
	check(<-done)
	check(<-done)
	baseline := time.Since(t0).Seconds()
	closeAll(ps)
	return []row{{
		workload: fmt.Sprintf("message throughput: 2 processes stream %d messages", n),
		luarun:   fmt.Sprintf("%.2fM msgs/s (%.1f allocs/msg)", float64(n)/luarun/1e6, allocs),
		baseline: fmt.Sprintf("%.2fM msgs/s (channel, cap 1024)", float64(n)/baseline/1e6),
		floor:    "—",
		ratio:    fmt.Sprintf("luarun/A %.2f×", baseline/luarun),
		target:   "0 allocs per small scalar message",
	}}
}

func medianF(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3)
	}
	return d.Round(100 * time.Microsecond).String()
}

func fmtBytes(b float64) string {
	if b >= 1024 {
		return fmt.Sprintf("%.1f KB", b/1024)
	}
	return fmt.Sprintf("%.0f B", b)
}
