package luaproc

// Memory bounds (memory.go): refusals are catchable, a process over its
// bound ends alone, the watchdog ends the process counting the most, and
// the count is compared with what the Go heap grew by.

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// TestRepPastMemoryIsCatchable: string.rep of 2^40 bytes raised nothing
// before: Go's allocation failed with "fatal error: runtime: out of
// memory", ending the runtime. Now it is refused before it allocates,
// pcall catches it, and the runtime goes on.
func TestRepPastMemoryIsCatchable(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	res, err := runLua(t, rt, "rep.lua", `
function main()
  local ok1, e1 = pcall(string.rep, "x", 2^40)
  local ok2, e2 = pcall(function() return ("ab"):rep(2^39) .. "c" end)
  local ok3, e3 = pcall(function() local s = ("x"):rep(2^20); return s:rep(2^20) end)
  return ok1, e1, ok2, e2, ok3, e3, #("x"):rep(1000)
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, "not enough memory", false, "not enough memory", false, "not enough memory", int64(1000)}, res)
	res, err = runLua(t, rt, "after.lua", `return 1 + 1`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(2)}, res)
}

// growLua's hog grows a table of distinct strings until an allocation is
// refused; honest computes a known sum beside it.
const growLua = `
function hog()
  local t = {}
  for i = 1, 1e9 do t[i] = "item " .. i end
end
function honest()
  local s = 0
  for i = 1, 2e5 do s = s + i end
  local t = {}
  for i = 1, 1000 do t[i] = {i} end
  return s, #t
end
function main()
  local hog = process.spawn("hog")
  local ok, err = process.wait(hog)
  local h = process.spawn("honest")
  return ok, err, process.wait(h)
end`

// TestTableGrowthEndsOnlyThatProcess: a process growing a table without
// end took the runtime down; with a runtime bound it ends alone, with
// "not enough memory", and another process finishes correctly.
func TestTableGrowthEndsOnlyThatProcess(t *testing.T) {
	runtime.GC()
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxMemory: heapObjects() + 128<<20})
	res, err := runLua(t, rt, "grow.lua", growLua, "main")
	require.NoError(t, err)
	require.Len(t, res, 5)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "not enough memory")
	assert.Equal(t, payload.Payloads{true, int64(20000100000), int64(1000)}, res[2:])
}

// TestProcessMemoryBound: past MaxProcessMemory an allocation raises
// "not enough memory", catchable; what the process lets go counts no
// more (the count is re-based on what it still reaches), so it can
// allocate again; a process that does not catch it ends with it, and the
// others run on.
func TestProcessMemoryBound(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxProcessMemory: 8 << 20})
	res, err := runLua(t, rt, "bound.lua", `
function fill()
  local t = {}
  for i = 1, 1e9 do t[i] = ("x"):rep(100) .. i end
end
function catches()
  local ok, err = pcall(fill)
  collectgarbage()
  local s = ("y"):rep(4e6) -- half the bound again: it fits
  return ok, err, #s
end
function main()
  local a, b, c = catches()
  local pid = process.spawn("fill")
  local okw, werr = process.wait(pid)
  return a, b, c, okw, werr, ("z"):rep(3)
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 6)
	assert.Equal(t, payload.Payloads{false, "not enough memory", int64(4e6), false}, res[:4])
	assert.Contains(t, res[4], "not enough memory")
	assert.Equal(t, "zzz", res[5])
}

// TestProcessOverItsBoundEnds: a process found holding more than its
// bound (its walk, not just its count) ends with MemoryError: pcall
// cannot keep it alive.
func TestProcessOverItsBoundEnds(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxProcessMemory: 4 << 20})
	// Each message is 1 MB taken in whole (a charge the receiver cannot
	// refuse part of); the fifth puts it over its bound.
	res, err := runLua(t, rt, "over.lua", `
function keep()
  local t = {}
  while true do
    local ok, m = pcall(process.receive)
    if ok then t[#t+1] = m end
  end
end
function main()
  local pid = process.spawn("keep")
  local big = ("m"):rep(1e6)
  for i = 1, 8 do process.send(pid, big .. i) end
  return process.wait(pid)
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "not enough memory")
}

// TestWatchdogEndsTheBiggest: when the heap passes the runtime's bound
// by memory no allocation check saw (here the test's own), the watchdog
// ends the process that counts the most, and no other.
func TestWatchdogEndsTheBiggest(t *testing.T) {
	runtime.GC()
	bound := heapObjects() + 128<<20
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxMemory: bound})
	s, err := rt.LoadString("hold.lua", `
function hold(mb, to)
  local t = {}
  for i = 1, mb do t[i] = ("h"):rep(2^20 - 32) .. i end
  process.send(to, "holding")
  process.receive()
  return #t
end`)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	defer inbox.Close()
	big, err := rt.Start(context.Background(), s, "hold", int64(48), int64(inbox.PID()))
	require.NoError(t, err)
	small, err := rt.Start(context.Background(), s, "hold", int64(2), int64(inbox.PID()))
	require.NoError(t, err)
	for range 2 {
		_, err := inbox.Receive(testContext(t))
		require.NoError(t, err)
	}
	require.Greater(t, counted(rt, big.PID()), counted(rt, small.PID()))
	ballast := make([]byte, 80<<20) // the heap passes 7/8 of the bound (killLine), and is under it without big's 48 MB
	for i := range ballast {
		ballast[i] = 1
	}
	_, err = big.Wait(testContext(t))
	var me *MemoryError
	require.True(t, errors.As(err, &me), "%v", err)
	assert.True(t, me.Runtime)
	assert.True(t, strings.HasPrefix(err.Error(), "not enough memory"), err.Error())
	runtime.KeepAlive(ballast)
	ballast = nil
	runtime.GC()
	require.NoError(t, rt.Send(small.PID(), "go on"))
	res, err := small.Wait(testContext(t))
	require.NoError(t, err)
	assert.Equal(t, []any{int64(2)}, res)
}

// TestAccountingAgainstHeap: what a process counts, against what the Go
// heap grew by while it holds what it built (strings and tables, 32 MB
// or so). The count is re-based on a walk (collectgarbage("collect")),
// so it is what the process reaches; the stated factor is 2 either way.
func TestAccountingAgainstHeap(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	s, err := rt.LoadString("build.lua", `
function build(to)
  local strs, tabs = {}, {}
  for i = 1, 100000 do strs[i] = ("s"):rep(200) .. i end
  for i = 1, 50000 do tabs[i] = {x = i, y = i * 2, name = "t" .. i, i, i + 1} end
  local before = collectgarbage("count")
  collectgarbage()
  local after = collectgarbage("count")
  process.send(to, {before, after})
  process.receive()
  return #strs + #tabs
end`)
	require.NoError(t, err)
	var m0, m1, m2 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	defer inbox.Close()
	h, err := rt.Start(context.Background(), s, "build", int64(inbox.PID()))
	require.NoError(t, err)
	msg, err := inbox.Receive(testContext(t))
	require.NoError(t, err)
	counts := msg.Value.([]any)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	require.NoError(t, rt.Send(h.PID(), "done"))
	_, err = h.Wait(testContext(t))
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&m2)
	// The heap's growth is measured twice: from before the process to
	// while it holds what it built, and from then to after it ended.
	// Memory that other goroutines of the test binary (earlier tests'
	// runtimes winding down) hold or free meanwhile can distort one of
	// the two (CI once saw 17.4 MB grown for 40 MB built); the process's
	// own data is in both.
	grew := float64(int64(m1.HeapAlloc) - int64(m0.HeapAlloc))
	freed := float64(int64(m1.HeapAlloc) - int64(m2.HeapAlloc))
	charged, walked := number(counts[0])*1024, number(counts[1])*1024
	t.Logf("heap grew %.1f MB, then freed %.1f MB; the process counted %.1f MB charged, %.1f MB walked",
		grew/(1<<20), freed/(1<<20), charged/(1<<20), walked/(1<<20))
	within := func(count float64) bool {
		return math.Abs(count/grew-1) <= 0.5 || math.Abs(count/freed-1) <= 0.5
	}
	assert.True(t, within(walked), "walked count within a factor of 2 of the heap's growth")
	assert.True(t, within(charged), "charged count within a factor of 2 of the heap's growth")
}

// TestCollectgarbageCountIsTheProcess: collectgarbage("count") and
// gcinfo report the process's own memory (they reported the whole Go
// heap): small for a new process, up by a string's size when it holds
// one, down again when it lets it go.
func TestCollectgarbageCountIsTheProcess(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	res, err := runLua(t, rt, "count.lua", `
collectgarbage()
local k0 = collectgarbage("count")
local s = ("c"):rep(2^20)
local k1 = collectgarbage("count")
s = nil
collectgarbage()
local k2 = collectgarbage("count")
return k0, k1 - k0, k2, gcinfo()`, "")
	require.NoError(t, err)
	require.Len(t, res, 4)
	k0, grew, k2 := number(res[0]), number(res[1]), number(res[2])
	assert.Less(t, k0, 200.0, "a new process holds little (KB)")
	assert.InDelta(t, 1024, grew, 64, "a 1 MB string counts 1 MB")
	assert.Less(t, k2, k0+64, "let go and collected, it counts no more")
	assert.Equal(t, float64(int64(k2)), number(res[3]))
}

// testContext is a context for waits that must end (20 s: a loaded
// machine is slow, not stuck), cancelled with the test.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// counted is what the watchdog's list has for pid.
func counted(rt *Runtime, pid scheduler.PID) int64 {
	rt.mem.mu.Lock()
	defer rt.mem.mu.Unlock()
	for p, n := range rt.mem.big {
		if p.pid == pid {
			return n
		}
	}
	return 0
}

// number is a Lua number from a payload (an int64 when it is whole).
func number(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

// TestRecursiveAllEndsOnlyThatProcess: process.all recursing without end
// (coroutines made on the process's main state, where no charge is
// refused) ran until the runtime died; the watchdog ends it, with "not
// enough memory", and the runtime goes on.
func TestRecursiveAllEndsOnlyThatProcess(t *testing.T) {
	runtime.GC()
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxMemory: heapObjects() + 48<<20})
	s, err := rt.LoadString("all.lua", `
function f() process.all(f, f) end
function main()
  local ok, err = process.wait(process.spawn("f"))
  return ok, err, 6 * 7
end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	// ~10 s on a loaded 2-core machine: collections near the bound are slow
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "not enough memory")
	assert.Equal(t, int64(42), res[2])
}

// TestJSONEncodeChargesItsText: the text json.encode makes counts
// against the process's bound (3 MB of '<' are 18 MB of JSON, each
// escaped as \u003c), as json.decode's strings do.
func TestJSONEncodeChargesItsText(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxProcessMemory: 8 << 20})
	res, err := runLua(t, rt, "encode.lua", `
function main()
  local ok, err = pcall(json.encode, ("<"):rep(3e6))
  local small = json.encode(("<"):rep(1e5))
  return ok, err, #small
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, "not enough memory", int64(6e5 + 2)}, res)
}
