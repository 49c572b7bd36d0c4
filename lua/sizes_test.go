package lua

// The structs every luarun process holds two of stay within their Go
// size classes (issue 32: an idle process's heap): a few bytes over a
// class boundary cost the whole next class.

import (
	"math"
	"runtime"
	"testing"
	"unsafe"
)

// TestStateSizes: an LState fits the 176-byte size class (it was 200
// bytes, in the 208 class, then 192 while its Options' sizes were ints),
// a registry the 64-byte one (it was 72, in
// the 80 class), a Global the 256-byte one (it was 272, in the 288
// class), a growing frame stack the 32-byte one (it was 40, in the 48
// class), an allocator the 32-byte one (it was 64, then 48 while it
// kept a scratch LValue) and a segment of call frames the 256-byte one
// (it was 320, with 80-byte frames; one a process waiting in receive).
func TestStateSizes(t *testing.T) {
	if n := unsafe.Sizeof(LState{}); n > 176 {
		t.Errorf("an LState is %d bytes: more than the 176-byte size class", n)
	}
	if n := unsafe.Sizeof(registry{}); n > 64 {
		t.Errorf("a registry is %d bytes: more than the 64-byte size class", n)
	}
	if n := unsafe.Sizeof(Global{}); n > 256 {
		t.Errorf("a Global is %d bytes: more than the 256-byte size class", n)
	}
	if n := unsafe.Sizeof(autoGrowingCallFrameStack{}); n > 32 {
		t.Errorf("a growing frame stack is %d bytes: more than the 32-byte size class", n)
	}
	if n := unsafe.Sizeof(callFrameStackSegment{}); n > 256 {
		t.Errorf("a frame segment is %d bytes: more than the 256-byte size class", n)
	}
	if n := unsafe.Sizeof(allocator{}); n > 32 {
		t.Errorf("an allocator is %d bytes: more than the 32-byte size class", n)
	}
}

// TestTickNBudget: TickN checks the interrupt when n steps would take
// the budget below 0, however large n is, and counts them down when not.
func TestTickNBudget(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.ticks = 10
	L.TickN(4)
	if L.ticks != 6 {
		t.Fatalf("ticks %d after TickN(4) from 10, want 6", L.ticks)
	}
	L.TickN(1 << 40) // checks, and starts a new budget
	if L.ticks != tickEvery {
		t.Fatalf("ticks %d after a check, want %d", L.ticks, tickEvery)
	}
}

// TestFrameStackStartsSmall: a growing frame stack starts with one
// segment's slot (8 bytes; it was 4 slots, 32 bytes, two per luarun
// process, most of which never use a second segment), and grows past it
// by doubling: frames pushed over several segments pop back in order.
func TestFrameStackStartsSmall(t *testing.T) {
	cs := newAutoGrowingCallFrameStack(100).(*autoGrowingCallFrameStack)
	if n := len(cs.segments); n != 1 {
		t.Fatalf("a new frame stack has %d segment slots, want 1", n)
	}
	const depth = 5*FramesPerSegment + 1
	for i := range depth {
		cs.Push(callFrame{Pc: i})
	}
	if cs.Sp() != depth || cs.Last().Pc != depth-1 {
		t.Fatalf("depth %d, last frame %d after %d pushes", cs.Sp(), cs.Last().Pc, depth)
	}
	for i := depth - 1; i >= 0; i-- {
		if f := cs.Pop(); f == nil || f.Pc != i {
			t.Fatalf("pop %d: got %v", i, f)
		}
	}
	if cs.Pop() != nil || !cs.IsEmpty() {
		t.Fatal("the stack is not empty after popping every frame")
	}
}

// TestRegistryMadeOnUse: a state's registry table is made by its first
// use, not with the state (an empty table is 80 bytes, and a luarun
// process's state rarely writes one); once made, every way to it finds
// the same table, and what is stored stays.
func TestRegistryMadeOnUse(t *testing.T) {
	L := NewState(Options{SkipOpenLibs: true})
	defer L.Close()
	if L.G.RegistryIfMade() != nil {
		t.Fatal("a new state made its registry table")
	}
	reg, ok := L.Get(RegistryIndex).(*LTable)
	if !ok || reg != L.G.RegistryIfMade() || reg != L.G.Registry() {
		t.Fatalf("RegistryIndex gave %v, the state holds %v", reg, L.G.RegistryIfMade())
	}
	L.SetField(L.Get(RegistryIndex), "k", LString("v"))
	if v := L.G.Registry().RawGetString("k"); v != LString("v") {
		t.Fatalf("the registry lost its key: %v", v)
	}
}

// TestNumberBoxes: the numbers LNumber2I boxes in its blocks (past the
// preloaded small integers) are LNumbers of their values, each its own,
// across blocks and after a collection; -0 stays -0.
func TestNumberBoxes(t *testing.T) {
	al := newAllocator(4)
	var vs []LValue
	for i := range 50 {
		vs = append(vs, al.LNumber2I(LNumber(float64(i)+0.5)))
	}
	runtime.GC()
	for i, v := range vs {
		if n, ok := v.(LNumber); !ok || n != LNumber(float64(i)+0.5) {
			t.Fatalf("box %d holds %#v", i, v)
		}
	}
	if v := al.LNumber2I(7); v != preloads[7] {
		t.Fatalf("7 boxed as %#v, not the preloaded one", v)
	}
	if n, ok := al.LNumber2I(LNumber(math.Copysign(0, -1))).(LNumber); !ok || !math.Signbit(float64(n)) {
		t.Fatal("-0 lost its sign")
	}
}
