// Package gcpace paces Go's garbage collector for a program running Lua
// processes: the luarun command starts it, and an application embedding
// luarun may (Start); nothing starts it otherwise.
//
// Go collects when the heap has grown by GOGC percent (100) of what the
// last collection left live, and not before it reaches 4 MB. A Lua
// program allocates briskly (strings, tables, closures, gopher-lua's
// boxed values) while often keeping little live, so with Go's default the
// collector runs hundreds of times a second: counting the lines of a
// 200 MB file with fs.lines took 0.88-0.93 s under GOGC=100 and
// 0.41-0.43 s under GOGC=800 (lua5.4: 0.43 s).
//
// So the command keeps a floor under the growth: after each collection
// (a finalizer on a sentinel object, re-armed each time) it sets the
// percentage so that the next collection comes when the heap has grown by
// GOGC's 100 % of the live heap or by heapFloor, whichever is more. A big
// heap gets Go's own pace; a small one grows by heapFloor at most before
// it is collected.
//
// And a heap that grows with what stays live — a program starting a
// million processes, each of which waits — is collected at half Go's
// pace: when over half of the growth the last percentage allowed stayed
// live, the next collection waits for the heap to grow by twice the live
// heap (growingPercent), not once. Collecting a heap that is nearly all
// live frees little and costs a mark of all of it; with 1,000,000 idle
// processes (bench/million.lua, 2-core VM, loaded) starting them took
// 24.2-25.9 s under GOGC=100, 15.2 s under 200, 14.4 s under 300, with
// the same peak RSS (3.94-3.96 GB): the heap was live. The cost is a
// bound on the overshoot: when the growth stops, the heap can reach 3x
// the live heap once before the next collection sets Go's pace again.
//
// The luarun command starts it first thing; an application embedding
// luarun keeps its own policy unless it calls Start. It does nothing when
// the GOGC environment variable is set.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// heapFloor is the least the heap grows by between two collections.
const heapFloor = 32 << 20

// gcPercentFor is the GOGC percentage that lets a heap of live bytes grow
// by floor bytes, and never less than Go's 100 %; a live heap under 4 MB
// counts as 4 MB (Go's smallest heap goal is 4 MB times the percentage
// over 100).
func gcPercentFor(live, floor uint64) int {
	live = max(live, 4<<20)
	return int(max(100, floor*100/live))
}

// growingPercent is the percentage for a heap that grows with what stays
// live.
const growingPercent = 200

// nextGCPercent is the percentage after a collection that left live
// bytes, the one before it having left prevLive under percent prev: the
// floor's (gcPercentFor), or growingPercent when over half of the growth
// prev allowed stayed live.
func nextGCPercent(prevLive, live uint64, prev int, floor uint64) int {
	p := gcPercentFor(live, floor)
	allowed := max(prevLive, 4<<20) * uint64(prev) / 100
	if live > prevLive && (live-prevLive)*2 > allowed {
		p = max(p, growingPercent)
	}
	return p
}

// gcSentinel is the object whose finalizer runs after each collection
// (it holds a pointer: pointer-free objects this small may share a block
// with others and never be finalized).
type gcSentinel struct{ _ *int }

// Start paces the collector as the package comment says until stop is
// called, which puts back the percentage in force before Start. It does
// nothing (and stop nothing) when the GOGC environment variable is set.
// One pacer at a time: a second Start before the first one's stop would
// set the percentage against it.
func Start() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	percent := gcPercentFor(0, heapFloor)
	before := debug.SetGCPercent(percent)
	var stopped atomic.Bool // written by stop, read by the finalizer goroutine
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var prevLive uint64 // the finalizer goroutine's, as percent is
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
			if stopped.Load() {
				return
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				live := sample[0].Value.Uint64()
				percent = nextGCPercent(prevLive, live, percent, heapFloor)
				prevLive = live
				debug.SetGCPercent(percent)
			}
			arm()
		})
	}
	arm()
	return func() {
		stopped.Store(true)
		debug.SetGCPercent(before)
	}
}
