package luaproc

// How much work json.encode and json.decode do between two checks of the
// state's interrupt, in CPU time of the thread running them (a loaded
// machine's descheduling, which wall time would count, does not count):
// the bound on how late a kill, step limit or shutdown can be seen on an
// idle machine. Run with -kill.big for 30 MB (TestKillLatency's size).

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lua "github.com/luarun/luarun/lua"
)

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		panic(errno)
	}
	return time.Duration(ts.Nano())
}

// TestJSONCheckGaps: the most CPU time json.encode or json.decode of 3
// MB (30 MB with -kill.big) spends between two checks of the interrupt
// stays under the 10 ms a kill must take effect in. The bound only
// catches a long stretch without a check (20 ms at 3 MB: walking the
// keys of a table of 80,000 took 25 ms unchecked; 100 ms at 30 MB, where
// the biggest allocations' page faults alone take 10 to 20 ms of CPU on
// a loaded machine), or an eighth of the call's CPU time if that is more:
// page faults stretch the whole call and its gaps alike (CI, -cpu 1: a
// 334 ms encode had a 21 ms gap; idle, 100-240 ms and 0.5-2.4 ms); the
// collector is off during each call (its mark assists are not json's);
// the figures are logged.
func TestJSONCheckGaps(t *testing.T) {
	n, bound := 80000, 20*time.Millisecond
	if *killBig {
		n, bound = 800000, 100*time.Millisecond
	}
	runtime.LockOSThread() // the thread's clock is the state's
	defer runtime.UnlockOSThread()
	L := lua.NewState()
	defer L.Close()
	json := L.NewTable()
	for k, f := range jsonFuncs {
		json.RawSetString(k, L.NewFunction(f))
	}
	L.SetGlobal("json", json)
	require.NoError(t, L.DoString(`
big = {}
for i = 1, `+fmt.Sprint(n)+` do big[i] = {a = i, b = "some text", c = {1, 2, 3}} end
text = json.encode(big)
keys = {}
for i = 1, `+fmt.Sprint(n)+` do keys["key" .. i] = i end
long = ('{"s":"' .. ('x\\n\\u00e9 '):rep(`+fmt.Sprint(3*n)+`) .. '"}')`))
	var last, worst time.Duration
	var stk string
	in := &lua.Interrupt{Check: func(*lua.LState) error {
		now := threadCPU()
		if now-last > worst { // where the longest gap ends
			buf := make([]byte, 8192)
			stk = string(buf[:runtime.Stack(buf, false)])
		}
		worst, last = max(worst, now-last), now
		return nil
	}}
	in.Flag.Store(cancelFlag) // every check calls Check
	for _, src := range []string{"json.encode(big)", "json.decode(text)", "json.encode(keys)", "json.decode(long)"} {
		fn, err := L.LoadString("return " + src)
		require.NoError(t, err)
		// No collection during the call: a mark assist that falls in a gap
		// is the collector's work, which no check of json's can shorten
		// (CI: a 23 ms gap in encoding 80,000 keys, whose walk ticks every
		// key and comparison).
		runtime.GC()
		gcPercent := debug.SetGCPercent(-1)
		L.SetInterrupt(in)
		start := threadCPU()
		worst, last = 0, start
		err = L.CallByParam(lua.P{Fn: fn, NRet: 1, Protect: true})
		L.SetInterrupt(nil)
		debug.SetGCPercent(gcPercent)
		require.NoError(t, err)
		L.Pop(1)
		total := threadCPU() - start
		t.Logf("%s: %v of CPU, at most %v between two checks", src, total, worst)
		assert.Less(t, worst, max(bound, total/8), "%s (%v of CPU): the check that ended the gap:\n%s", src, total, stk)
	}
}
