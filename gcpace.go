package main

// The Go collector's pace for the luarun command.
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
// it is collected. Only the command does this (an application embedding
// luarun keeps its own policy), and not when the GOGC environment
// variable is set.

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

// gcSentinel is the object whose finalizer runs after each collection
// (it holds a pointer: pointer-free objects this small may share a block
// with others and never be finalized).
type gcSentinel struct{ _ *int }

// keepHeapFloor paces the collector as the file comment says, unless
// GOGC is set, until stop is called (for tests; the command never stops
// it). The percentage is left as it was last set.
func keepHeapFloor() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	debug.SetGCPercent(gcPercentFor(0, heapFloor))
	var stopped atomic.Bool // written by stop, read by the finalizer goroutine
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
			if stopped.Load() {
				return
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetGCPercent(gcPercentFor(sample[0].Value.Uint64(), heapFloor))
			}
			arm()
		})
	}
	arm()
	return func() { stopped.Store(true) }
}
