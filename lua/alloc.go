package lua

import (
	"math"
	"unsafe"
)

// iface is an internal representation of the go-interface.
type iface struct {
	itab unsafe.Pointer
	word unsafe.Pointer
}

const preloadLimit LNumber = 128

var _fv float64
var _uv uintptr

var preloads [int(preloadLimit)]LValue

func init() {
	for i := 0; i < int(preloadLimit); i++ {
		preloads[i] = LNumber(i)
	}
}

// allocator is a fast bulk memory allocator for the LValue. luarun:
// 32 bytes, not 64 (one a luarun process): gopher-lua's fheader (a
// pointer to fptrs, never read) is gone, and so is its scratchValue
// (an LNumber whose data word was overwritten): LNumber2I makes the
// interface from numberItab (TestStateSizes).
type allocator struct {
	fptrs []float64
	size  int
}

// numberItab is the type word of an LValue holding an LNumber.
var numberItab = func() unsafe.Pointer {
	var v LValue = LNumber(0)
	return (*iface)(unsafe.Pointer(&v)).itab
}()

func newAllocator(size int) *allocator {
	// luarun: the first block is made by the first number that needs
	// one (LNumber2I), not up front: a state that boxes none saves it.
	return &allocator{size: size}
}

// LNumber2I takes a number value and returns an interface LValue representing the same number.
// Converting an LNumber to a LValue naively, by doing:
// `var val LValue = myLNumber`
// will result in an individual heap alloc of 8 bytes for the float value. LNumber2I amortizes the cost and memory
// overhead of these allocs by allocating blocks of floats instead.
// The downside of this is that all of the floats on a given block have to become eligible for gc before the block
// as a whole can be gc-ed.
func (al *allocator) LNumber2I(v LNumber) LValue {
	// first check for shared preloaded numbers
	// (luarun: not for -0, which would become +0)
	if v >= 0 && v < preloadLimit && float64(v) == float64(int64(v)) && !math.Signbit(float64(v)) {
		return preloads[int(v)]
	}

	// check if we need a new alloc page
	if cap(al.fptrs) == len(al.fptrs) {
		al.fptrs = make([]float64, 0, al.size)
	}

	// alloc a new float, and store our value into it
	al.fptrs = append(al.fptrs, float64(v))
	fptr := &al.fptrs[len(al.fptrs)-1]

	// an LNumber's interface, with our allocated value as its data
	var lv LValue
	*(*iface)(unsafe.Pointer(&lv)) = iface{itab: numberItab, word: unsafe.Pointer(fptr)}
	return lv
}
