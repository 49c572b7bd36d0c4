package lua

// Memory accounting (luarun's fork): what a state allocates, counted at
// the places that allocate on its behalf, so that its owner (luaproc's
// process) can bound it. Go has no per-goroutine heap accounting and no
// free hook, so:
//
//   - Each allocation site with a size that a script controls charges
//     its bytes: the strings the library builds (rep, format, gsub,
//     concat, upper, ...), OP_CONCAT, tables made (NewTable,
//     CreateTable, OP_NEWTABLE) and grown (table.go: chargeGrowth), value
//     stacks and call stacks grown, coroutines and closures made.
//     Nothing is uncharged: the count is what was allocated since the
//     owner last measured the state (Owner.MemoryCharge re-bases it on a
//     walk of what is reachable, Measure), so it only ever over-states
//     what the state holds.
//   - The fast path is one subtraction and one branch on Global.memLeft,
//     the bytes the owner granted before it wants to hear again; the
//     grant runs out, or a charge is large, and the owner decides
//     (MemoryOwner.MemoryCharge): grant more, re-base, or refuse. A
//     refusal raises "not enough memory" (catchable by pcall, as Lua
//     5.1's memory error; no position, as 5.1's) BEFORE the allocation.
//   - A table grows inside LTable's methods, which are given no state:
//     the table knows its own. Each table a state makes (NewTable,
//     CreateTable, OP_NEWTABLE, a vararg function's arg, the state's
//     views of shared tables) points to its state's account (LTable.home,
//     Global.home), and its growth charges that state (chargeGrowth), on
//     whatever goroutine grows it: the one running the state, as any use
//     of its tables. A table made with no state (newLTable, the tests')
//     charges nothing; Measure still sees it.
//   - A state with no owner (the zero Global) is never charged: memLeft
//     starts at math.MaxInt64.

import (
	"math"
	"unsafe"
)

// MemoryOwner is what a state's memory is charged to (luaproc's
// process): the state's ViewSet.Maker, when it implements this.
type MemoryOwner interface {
	// MemoryCharge is called on L's goroutine when the state's grant is
	// spent (Global.memLeft went below zero by the charge of n bytes that
	// is about to be allocated). It returns the new grant (> 0), and ok
	// false to refuse the allocation (the grant then leaves the n bytes
	// out); it may Measure the state first. A refusal raises in L: the
	// owner must not refuse where L runs no protected code (luaproc never
	// refuses a charge to its main state, which runs only its own Go code
	// between resumes; it ends the process instead when it is over its
	// bound).
	MemoryCharge(L *LState, n int64) (grant int64, ok bool)
}

// NotEnoughMemory is the message of a refused allocation, Lua 5.1's.
const NotEnoughMemory = "not enough memory"

// Sizes the charges use: what Go allocates for each kind of object
// (unsafe.Sizeof rounded to its size class).
const (
	valueBytes    = 16 // an LValue slot of an array part or a stack
	stringBytes   = 16 // the header an LString boxed in an LValue allocates
	tableBytes    = 80
	nodeBytes     = int(unsafe.Sizeof(tnode{})) // a node of a hash part
	functionBytes = 96                          // an LFunction and its upvalue slice
	upvalueBytes  = 48                          // an Upvalue
	threadBytes   = 512                         // an LState, its registry and first call frames
	frameBytes    = int64(unsafe.Sizeof(callFrame{}))
)

// SetMemoryGrant sets the bytes L's state may allocate before its owner is
// asked again (MemoryOwner.MemoryCharge). The owner sets the first grant
// when it takes the state; math.MaxInt64 turns charging off.
func (ls *LState) SetMemoryGrant(n int64) { ls.G.memLeft = n }

// MemoryGrant is what is left of the state's grant.
func (ls *LState) MemoryGrant() int64 { return ls.G.memLeft }

// charge counts n bytes (n >= 0) about to be allocated for ls's state;
// the owner may refuse them, which raises "not enough memory" in ls.
func (ls *LState) charge(n int) {
	if !memAccounting {
		return
	}
	g := ls.G
	g.memLeft -= int64(n)
	if g.memLeft < 0 {
		ls.chargeSlow(int64(n))
	}
}

// Charge counts n bytes about to be allocated on behalf of ls's state,
// for Go functions that build a value whose size the script controls
// (luaproc: message copies, file contents). It raises "not enough memory"
// in ls when the owner refuses them.
func (ls *LState) Charge(n int) {
	if n > 0 {
		ls.charge(n)
	}
}

// chargeSlow asks the owner, who refuses or grants; a refused charge is
// given back and raised.
func (ls *LState) chargeSlow(n int64) {
	g := ls.G
	owner, _ := g.Views.Maker.(MemoryOwner)
	if owner == nil {
		g.memLeft = math.MaxInt64
		return
	}
	grant, ok := owner.MemoryCharge(ls, n)
	g.memLeft = grant
	if !ok {
		ls.Error(LString(NotEnoughMemory), 0)
	}
}

// MemoryCounter is an owner that knows what its state holds:
// collectgarbage("count") and gcinfo report it (Lua 5.1's count is the
// state's own memory), and collectgarbage("collect") has it re-base its
// count first.
type MemoryCounter interface {
	MemoryCount(L *LState, collect bool) int64
}

// MemoryInUse is the bytes L's state holds by its owner's count
// (MemoryCounter), re-based first when collect is set; the Go heap's
// objects for a state with no such owner.
func MemoryInUse(L *LState, collect bool) int64 {
	if c, ok := L.G.Views.Maker.(MemoryCounter); ok {
		return c.MemoryCount(L, collect)
	}
	return int64(HeapBytes())
}

// chargeSize is n*each bytes, saturated (a size a script passes may be
// huge: string.rep's count).
func chargeSize(n, each int) int {
	if n <= 0 || each <= 0 {
		return 0
	}
	if n > math.MaxInt/each {
		return math.MaxInt
	}
	return n * each
}

// tableHome is the home of the tables g makes (LTable.home); nil for no
// state.
func (g *Global) tableHome() *tableHome {
	if g == nil {
		return nil
	}
	return &g.home
}

// chargeGrowth counts n bytes tb is about to grow by, to its state
// (LTable.home); nothing for a table with none. A refusal raises "not
// enough memory" in the thread running (Global.CurrentThread; the owner
// does not refuse a charge where nothing would catch it: see
// MemoryOwner). Each growth function of table.go calls it once, before
// it allocates.
func (tb *LTable) chargeGrowth(n int) {
	if !memAccounting {
		return
	}
	h := tb.home
	if h == nil || h.g == nil {
		return
	}
	g := h.g
	g.memLeft -= int64(n)
	if g.memLeft < 0 && g.CurrentThread != nil {
		g.CurrentThread.chargeSlow(int64(n))
	}
}

// tableCharge is what newLTable(acap, hcap) allocates itself: the header,
// the array part, and a hash part of up to 8 nodes made in the header's
// allocation (a larger one is setNodeVector's, which charges it).
func tableCharge(acap, hcap int) int {
	if !memAccounting {
		return 0 // compiled out with charge (accounting_off.go)
	}
	n := tableBytes + chargeSize(acap, valueBytes)
	if acap <= 0 && hcap > 0 && hcap <= 8 {
		n += chargeSize(1<<ceilLog2(hcap), nodeBytes)
	}
	return n
}

// tableChargeFb is tableCharge for OP_NEWTABLE's int2Fb counts
// (newTableFb; {} has room for two nodes).
func tableChargeFb(b, c int) int {
	if b == 0 && c == 0 {
		return tableBytes + 2*nodeBytes
	}
	return tableCharge(fb2int(b), fb2int(c))
}
