package luaproc

// What an idle process is made of stays within its size classes: these
// are the largest objects each process allocates (BENCHMARKS.md, issue
// 32: heap per idle process).

import (
	"context"
	"testing"
	"unsafe"

	"github.com/luarun/luarun/payload"
	"github.com/stretchr/testify/require"
)

// TestIdleProcessFits: a luaProcess, with the 8-byte header Go puts
// before an object of more than 512 bytes that holds pointers, fits the
// 768-byte size class. It was 1,184 bytes, in the 1,280 class, before
// the fields few processes use moved to procMore and the root task's
// first arguments into its argBuf; 1,016, in the 1,024 class, before
// the timeouts and xpcall's handler moved out and the copies of its
// context, its coroutines' context and its last sender's PID went; 880,
// in the 896 class, before process.all's fields left the root task
// (allWait), the main process's options moved to procMore and the
// request was packed.
func TestIdleProcessFits(t *testing.T) {
	const mallocHeader = 8
	if n := unsafe.Sizeof(luaProcess{}); n+mallocHeader > 768 {
		t.Fatalf("a luaProcess is %d bytes: with its malloc header, more than the 768-byte size class (move what few processes use to procMore)", n)
	}
}

// TestProcMoreUnmade: a process that never made a call, a monitor, a
// timer or a child (its procMore not made) answers the functions that
// look them up as one that has none: nothing to cancel, demonitor or
// wait for, and a down or a stray remote reply is dropped.
func TestProcMoreUnmade(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	const src = `
function idle() process.receive() end
function main()
  local other = process.spawn("idle")
  return process.cancel_timer(7), process.demonitor(3), process.wait(other, 0), other
end
function fresh()
  local ok, err = process.wait(999999, 0)
  return process.cancel_timer(7), process.demonitor(3), ok
end`
	res, err := runLua(t, rt, "unmade.lua", src, "fresh")
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{false, false, false}, res)
	res, err = runLua(t, rt, "unmade.lua", src, "main")
	require.NoError(t, err)
	require.Len(t, res, 4)
	require.Equal(t, []any{false, false}, []any(res[:2]))
}

// TestIdleProcessHeap: the heap an idle process holds (2,000 processes
// waiting in receive, HeapAlloc after a collection, less before) stays
// within issue 32's 4 KB (4,514 bytes before the cuts of this change:
// the 704-byte frame segment, the 1,280-byte luaProcess, the main state's
// 8-slot value stack). Not under the race detector, which changes what
// is allocated.
func TestIdleProcessHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes the allocations")
	}
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("idle.lua", idleLua)
	require.NoError(t, err)
	const n = 2000
	_, err = rt.Start(context.Background(), s, "main") // builds the runtime's template
	require.NoError(t, err)
	waitSteps(rt, 1)
	before := heapAfterGC()
	for range n {
		_, err := rt.Start(context.Background(), s, "main")
		require.NoError(t, err)
	}
	waitSteps(rt, n+1)
	perProc := float64(heapAfterGC()-before) / n
	t.Logf("%.0f heap bytes per idle process", perProc)
	if perProc > 4096 {
		t.Fatalf("an idle process holds %.0f heap bytes: more than 4 KB", perProc)
	}
}

// TestIdleCoroutineStack: the root coroutine of a process waiting in
// receive, started with up to two arguments, or sending first as
// bench/million.lua's idle processes do, still has the value stack it
// started with: coRegistrySize slots, 16 (256 bytes), suffice. It was 20
// slots (the 320-byte size class), sized for a prelude that needed 17
// with an argument; this one needs 13 (14 with two).
func TestIdleCoroutineStack(t *testing.T) {
	require.LessOrEqual(t, coRegistrySize, 16, "a coroutine's first value stack is more than 256 bytes")
	rt, _, _ := newTestRuntime(t, Options{})
	const src = `
function sink() while true do process.receive() end end
function idle(a, b) process.receive() end
function idle_send(to) process.send(to, true) local msg = process.receive() end`
	s, err := rt.LoadString("idlestack.lua", src)
	require.NoError(t, err)
	ctx := context.Background()
	sink, err := rt.Start(ctx, s, "sink")
	require.NoError(t, err)
	steps := uint64(1)
	waitSteps(rt, steps)
	cases := []struct {
		entry string
		args  []any
		steps uint64 // its first step, and the sink's if it sends
	}{
		{"idle", nil, 1}, {"idle", []any{1.0}, 1}, {"idle", []any{1.0, "two"}, 1},
		{"idle_send", []any{float64(sink.PID())}, 2}, {"idle_send", []any{float64(sink.PID()), "two"}, 2},
	}
	for _, c := range cases {
		p := rt.newProcess(s)
		_, err := rt.start(ctx, p, c.entry, c.args)
		require.NoError(t, err)
		steps += c.steps
		waitSteps(rt, steps) // p waits in receive
		require.Equal(t, coRegistrySize, p.root.co.StackCap(), "%s with %d arguments", c.entry, len(c.args))
	}
}
