package lua

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const MultRet = -1
const RegistryIndex = -10000
const EnvironIndex = -10001
const GlobalsIndex = -10002

/* ApiError {{{ */

type ApiError struct {
	Type       ApiErrorType
	Object     LValue
	StackTrace string
	// Underlying error. This attribute is set only if the Type is ApiErrorFile or ApiErrorSyntax
	Cause error
}

func newApiError(code ApiErrorType, object LValue) *ApiError {
	return &ApiError{code, object, "", nil}
}

func newApiErrorS(code ApiErrorType, message string) *ApiError {
	return newApiError(code, LString(message))
}

func newApiErrorE(code ApiErrorType, err error) *ApiError {
	return &ApiError{code, LString(err.Error()), "", err}
}

func (e *ApiError) Error() string {
	if len(e.StackTrace) > 0 {
		return fmt.Sprintf("%s\n%s", e.Object.String(), e.StackTrace)
	}
	return e.Object.String()
}

type ApiErrorType int

const (
	ApiErrorSyntax ApiErrorType = iota
	ApiErrorFile
	ApiErrorRun
	ApiErrorError
	ApiErrorPanic
)

/* }}} */

/* ResumeState {{{ */

type ResumeState int

const (
	ResumeOK ResumeState = iota
	ResumeYield
	ResumeError
)

/* }}} */

/* P {{{ */

type P struct {
	Fn      LValue
	NRet    int
	Protect bool
	Handler *LFunction
}

/* }}} */

/* Options {{{ */

// Options is a configuration that is used to create a new LState.
// luarun: the sizes are int32, so that
// Options are 20 bytes, not 40, and an LState (which holds them, as do
// each of its coroutines) is 176 bytes, not 192 (TestStateSizes).
type Options struct {
	// Call stack size. This defaults to `lua.CallStackSize`.
	CallStackSize int32
	// Data stack size. This defaults to `lua.RegistrySize`.
	RegistrySize int32
	// Allow the registry to grow from the registry size specified up to a value of RegistryMaxSize. A value of 0
	// indicates no growth is permitted. The registry will not shrink again after any growth.
	RegistryMaxSize int32
	// If growth is enabled, step up by an additional `RegistryGrowStep` each time to avoid having to resize too often.
	// This defaults to `lua.RegistryGrowStep`
	RegistryGrowStep int32
	// Controls whether or not libraries are opened by default
	SkipOpenLibs bool
	// Tells whether a Go stacktrace should be included in a Lua stacktrace when panics occur.
	IncludeGoStackTrace bool
	// If `MinimizeStackMemory` is set, the call stack will be automatically grown or shrank up to a limit of
	// `CallStackSize` in order to minimize memory usage. This does incur a slight performance penalty.
	MinimizeStackMemory bool
	// PropagateGoPanics (luarun): a Go panic that is not a Lua error is
	// not caught by PCall or a coroutine's resume, but goes on up the Go
	// stack as a *GoPanic (gopanic.go).
	PropagateGoPanics bool
}

/* }}} */

/* Debug {{{ */

// Debug describes a level of the stack (GetStack) or a function
// (GetInfo with '>'). A level that is a call lost to a tail call (Lua
// 5.1's pseudo-levels, IsTailCall) has no frame.
type Debug struct {
	frame           *callFrame
	tail            bool
	Name            string
	What            string
	Source          string
	CurrentLine     int
	NUpvalues       int
	LineDefined     int
	LastLineDefined int
}

/* }}} */

/* callFrame {{{ */

// callFrame is one call's frame. luarun: Idx, NArgs, NRet and TailCall
// are int32, two to a word, so that a frame is 64 bytes, not 80, and a
// segment of FramesPerSegment frames 256, not 320 (one a process
// waiting in receive; TestStateSizes).
type callFrame struct {
	Fn         *LFunction
	Parent     *callFrame
	Pc         int
	Base       int
	LocalBase  int
	ReturnBase int
	Idx        int32
	NArgs      int32
	NRet       int32
	TailCall   int32
}

type callFrameStack interface {
	Push(v callFrame)
	Pop() *callFrame
	Last() *callFrame

	SetSp(sp int)
	Sp() int
	At(sp int) *callFrame

	IsFull() bool
	IsEmpty() bool

	FreeAll()

	// Extend lets the stack hold n more frames than its maximum until
	// the returned func is called (luarun: ExtendCallStack).
	Extend(n int) (undo func())
}

type fixedCallFrameStack struct {
	array []callFrame
	sp    int
}

func newFixedCallFrameStack(size int) callFrameStack {
	return &fixedCallFrameStack{
		array: make([]callFrame, size),
		sp:    0,
	}
}

func (cs *fixedCallFrameStack) IsEmpty() bool { return cs.sp == 0 }

func (cs *fixedCallFrameStack) IsFull() bool { return cs.sp == len(cs.array) }

func (cs *fixedCallFrameStack) Clear() {
	cs.sp = 0
}

func (cs *fixedCallFrameStack) Push(v callFrame) {
	cs.array[cs.sp] = v
	cs.array[cs.sp].Idx = int32(cs.sp)
	cs.sp++
}

func (cs *fixedCallFrameStack) Sp() int {
	return cs.sp
}

func (cs *fixedCallFrameStack) SetSp(sp int) {
	cs.sp = sp
}

func (cs *fixedCallFrameStack) Last() *callFrame {
	if cs.sp == 0 {
		return nil
	}
	return &cs.array[cs.sp-1]
}

func (cs *fixedCallFrameStack) At(sp int) *callFrame {
	return &cs.array[sp]
}

func (cs *fixedCallFrameStack) Pop() *callFrame {
	cs.sp--
	return &cs.array[cs.sp]
}

func (cs *fixedCallFrameStack) FreeAll() {
	// nothing to do for fixed callframestack
}

// Extend cannot move a fixed stack (frames point at their parents in
// it): it gives no room (luarun).
func (cs *fixedCallFrameStack) Extend(n int) func() { return func() {} }

// FramesPerSegment should be a power of 2 constant for performance reasons. It will allow the go compiler to change
// the divs and mods into bitshifts. Max is 256 due to current use of uint8 to count how many frames in a segment are
// used. luarun: 4, not 8: a segment of 8 frames was 704 bytes (its 640
// in the 704-byte size class), the largest allocation of an idle process
// (its coroutine waits 3 frames deep); 4 frames are 320 bytes, a size
// class of their own. Pop keeps one emptied segment as a spare, so a call
// depth that moves back and forth across a segment boundary does not
// take and give back a segment each time.
const FramesPerSegment = 4

type callFrameStackSegment struct {
	array [FramesPerSegment]callFrame
}
type segIdx uint16
type autoGrowingCallFrameStack struct {
	// segments grows (doubling) up to maxSegs, so a deep maximum costs
	// nothing until it is used (luarun: the slice was made at its maximum
	// length up front, 8 bytes per 8 frames of the maximum).
	segments []*callFrameStackSegment
	// maxSegs is an int32 (luarun), so that the stack is 32 bytes, not
	// 40 (the 48-byte size class), two per luarun process
	maxSegs int32
	segIdx  segIdx
	// segSp is the number of frames in the current segment which are used. Full 'sp' value is segIdx * FramesPerSegment + segSp.
	// It points to the next stack slot to use, so 0 means to use the 0th element in the segment, and a value of
	// FramesPerSegment indicates that the segment is full and cannot accommodate another frame.
	segSp uint8
}

var segmentPool sync.Pool

func newCallFrameStackSegment() *callFrameStackSegment {
	seg := segmentPool.Get()
	if seg == nil {
		return &callFrameStackSegment{}
	}
	return seg.(*callFrameStackSegment)
}

func freeCallFrameStackSegment(seg *callFrameStackSegment) {
	if seg != nil { // luarun: the first segment is made on the first Push
		segmentPool.Put(seg)
	}
}

// newCallFrameStack allocates a new stack for a lua state, which will auto grow up to a max size of at least maxSize.
// it will actually grow up to the next segment size multiple after maxSize, where the segment size is dictated by
// FramesPerSegment.
func newAutoGrowingCallFrameStack(maxSize int) callFrameStack {
	cs := &autoGrowingCallFrameStack{}
	cs.init(maxSize, make([]*callFrameStackSegment, 1))
	return cs
}

// init makes cs an empty stack of at most maxSize frames (rounded up to
// whole segments) whose first segment slot is first[0] (luarun: one
// slot, doubling in Push: a state that only resumes coroutines, or a
// process waiting in receive, uses one segment; the slot may live in
// the state's own allocation, stateAllocs).
func (cs *autoGrowingCallFrameStack) init(maxSize int, first []*callFrameStackSegment) {
	maxSegs := (maxSize + (FramesPerSegment - 1)) / FramesPerSegment
	*cs = autoGrowingCallFrameStack{
		segments: first[:min(maxSegs, 1)],
		maxSegs:  int32(min(maxSegs, math.MaxInt32)),
	}
	// luarun: the first segment is made by the first Push (a state that
	// only resumes coroutines never calls anything itself).
}

func (cs *autoGrowingCallFrameStack) IsEmpty() bool {
	return cs.segIdx == 0 && cs.segSp == 0
}

// IsFull returns true if the stack cannot receive any more stack pushes without overflowing
func (cs *autoGrowingCallFrameStack) IsFull() bool {
	return int32(cs.segIdx)+1 >= cs.maxSegs && cs.segSp >= FramesPerSegment
}

// Extend raises the maximum by n frames (rounded up to whole segments)
// until undo is called; undo pops the empty segment the extra frames may
// leave above the old maximum, so that IsFull holds again at it (luarun).
func (cs *autoGrowingCallFrameStack) Extend(n int) (undo func()) {
	extra := int32(min((n+FramesPerSegment-1)/FramesPerSegment, math.MaxInt32-int(cs.maxSegs)))
	cs.maxSegs += extra
	return func() {
		cs.maxSegs -= extra
		cs.freeSpare()
		for int32(cs.segIdx) >= cs.maxSegs && cs.segSp == 0 && cs.segIdx > 0 {
			freeCallFrameStackSegment(cs.segments[cs.segIdx])
			cs.segments[cs.segIdx] = nil
			cs.segIdx--
			cs.segSp = FramesPerSegment
		}
	}
}

// freeSpare frees the spare segment above the current one, if any
// (luarun: Pop keeps one).
func (cs *autoGrowingCallFrameStack) freeSpare() {
	if next := int(cs.segIdx) + 1; next < len(cs.segments) && cs.segments[next] != nil {
		freeCallFrameStackSegment(cs.segments[next])
		cs.segments[next] = nil
	}
}

func (cs *autoGrowingCallFrameStack) Clear() {
	cs.freeSpare()
	for i := segIdx(1); i <= cs.segIdx; i++ {
		freeCallFrameStackSegment(cs.segments[i])
		cs.segments[i] = nil
	}
	cs.segIdx = 0
	cs.segSp = 0
}

func (cs *autoGrowingCallFrameStack) FreeAll() {
	cs.freeSpare()
	for i := segIdx(0); i <= cs.segIdx; i++ {
		freeCallFrameStackSegment(cs.segments[i])
		cs.segments[i] = nil
	}
}

// Push pushes the passed callFrame onto the stack. it panics if the stack is full, caller should call IsFull() before
// invoking this to avoid this.
//
// luarun: Push, Pop and Last are a short path within the current
// segment and a call out at a segment's edge; "% FramesPerSegment" on an
// index known to be in range drops the bounds check. Last is small
// enough to be inlined anywhere, and the profile (which devirtualizes
// the VM's calls through callFrameStack) inlines Push where the VM
// calls it; Pop, just over the inliner's budget, stays a call (the
// figures are in FORK.md).
func (cs *autoGrowingCallFrameStack) Push(v callFrame) {
	sp := cs.segSp
	if seg := cs.segments[cs.segIdx]; seg != nil && sp < FramesPerSegment {
		f := &seg.array[sp%FramesPerSegment]
		*f = v
		f.Idx = int32(int(sp) + FramesPerSegment*int(cs.segIdx))
		cs.segSp = sp + 1
		return
	}
	cs.pushSegment(v)
}

// pushSegment is Push where the current segment is full, or not yet
// made.
func (cs *autoGrowingCallFrameStack) pushSegment(v callFrame) {
	curSeg := cs.segments[cs.segIdx]
	if curSeg == nil { // luarun: the first Push
		curSeg = newCallFrameStackSegment()
		cs.segments[cs.segIdx] = curSeg
	}
	if cs.segSp >= FramesPerSegment {
		// segment full, push new segment if allowed
		if int32(cs.segIdx) < cs.maxSegs-1 {
			if int(cs.segIdx) == len(cs.segments)-1 {
				grown := make([]*callFrameStackSegment, min(2*len(cs.segments), int(cs.maxSegs)))
				copy(grown, cs.segments)
				cs.segments = grown
			}
			cs.segIdx++
			if curSeg = cs.segments[cs.segIdx]; curSeg == nil { // luarun: else the spare Pop kept
				curSeg = newCallFrameStackSegment()
				cs.segments[cs.segIdx] = curSeg
			}
			cs.segSp = 0
		} else {
			// luarun: a Lua error (it was a Go panic), which pcall catches
			// also where Go panics are not (Options.PropagateGoPanics)
			panic(newApiErrorS(ApiErrorRun, "lua callstack overflow"))
		}
	}
	curSeg.array[cs.segSp] = v
	curSeg.array[cs.segSp].Idx = int32(int(cs.segSp) + FramesPerSegment*int(cs.segIdx))
	cs.segSp++
}

// Sp retrieves the current stack depth, which is the number of frames currently pushed on the stack.
func (cs *autoGrowingCallFrameStack) Sp() int {
	return int(cs.segSp) + int(cs.segIdx)*FramesPerSegment
}

// SetSp can be used to rapidly unwind the stack, freeing all stack frames on the way. It should not be used to
// allocate new stack space, use Push() for that.
func (cs *autoGrowingCallFrameStack) SetSp(sp int) {
	desiredSegIdx := segIdx(sp / FramesPerSegment)
	desiredFramesInLastSeg := uint8(sp % FramesPerSegment)
	if cs.segIdx < desiredSegIdx {
		// luarun: sp is the depth now, with the last segment full (a
		// depth that is a multiple of FramesPerSegment may be that or an
		// empty segment above it); setting segSp to 0 here dropped a
		// whole segment of live frames.
		return
	}
	cs.freeSpare()
	for {
		if cs.segIdx <= desiredSegIdx {
			break
		}
		freeCallFrameStackSegment(cs.segments[cs.segIdx])
		cs.segments[cs.segIdx] = nil
		cs.segIdx--
	}
	cs.segSp = desiredFramesInLastSeg
}

func (cs *autoGrowingCallFrameStack) Last() *callFrame {
	if sp := cs.segSp; sp != 0 {
		return &cs.segments[cs.segIdx].array[(sp-1)%FramesPerSegment]
	}
	return cs.lastBelow()
}

// lastBelow is Last with the current segment empty: the top frame is
// the last of the segment below, if any.
func (cs *autoGrowingCallFrameStack) lastBelow() *callFrame {
	if cs.segIdx == 0 {
		return nil
	}
	return &cs.segments[cs.segIdx-1].array[FramesPerSegment-1]
}

func (cs *autoGrowingCallFrameStack) At(sp int) *callFrame {
	segIdx := segIdx(sp / FramesPerSegment)
	frameIdx := uint8(sp % FramesPerSegment)
	return &cs.segments[segIdx].array[frameIdx]
}

// Pop pops off the most recent stack frame and returns it
func (cs *autoGrowingCallFrameStack) Pop() *callFrame {
	sp := cs.segSp - 1
	if sp < FramesPerSegment { // segSp was not 0
		cs.segSp = sp
		return &cs.segments[cs.segIdx].array[sp%FramesPerSegment]
	}
	return cs.popBelow()
}

// popBelow is Pop with the current segment empty: it pops the last frame
// of the segment below, if any.
func (cs *autoGrowingCallFrameStack) popBelow() *callFrame {
	if cs.segIdx == 0 {
		return nil // stack empty
	}
	// luarun: the emptied segment stays as the spare (Push takes it
	// again); the one above it, if any, is freed.
	cs.freeSpare()
	cs.segIdx--
	cs.segSp = FramesPerSegment - 1
	return &cs.segments[cs.segIdx].array[FramesPerSegment-1]
}

/* }}} */

/* registry {{{ */

type registryHandler interface {
	registryOverflow()
	charge(n int) // luarun: count n bytes about to be allocated (memory.go)
}

// registry is a state's value stack. luarun: growBy and maxSize are
// int32, so that a registry is 64 bytes, not 72 (the 80-byte size
// class), two per luarun process (TestStateSizes).
type registry struct {
	array   []LValue
	top     int
	growBy  int32
	maxSize int32
	alloc   *allocator
	handler registryHandler
}

func newRegistry(handler registryHandler, initialSize int, growBy int, maxSize int, alloc *allocator) *registry {
	rg := &registry{}
	rg.init(handler, initialSize, growBy, maxSize, alloc)
	return rg
}

// init makes rg an empty registry of initialSize slots (luarun: rg may
// live in its state's allocation, stateAllocs).
func (rg *registry) init(handler registryHandler, initialSize int, growBy int, maxSize int, alloc *allocator) {
	*rg = registry{make([]LValue, initialSize), 0, int32(min(growBy, math.MaxInt32)), int32(min(maxSize, math.MaxInt32)), alloc, handler}
}

func (rg *registry) checkSize(requiredSize int) { // +inline-start
	if requiredSize > cap(rg.array) {
		rg.resize(requiredSize)
	}
} // +inline-end

func (rg *registry) resize(requiredSize int) { // +inline-start
	// luarun: geometric, so pushing n values costs O(n), not O(n²/growBy);
	// the padding only when doubling is not enough (a 16-slot stack that
	// needs 17 became 145 slots, 2.3 KB).
	newSize := 2 * len(rg.array)
	if newSize < requiredSize {
		newSize = requiredSize + int(rg.growBy) // give some padding
	}
	if newSize > int(rg.maxSize) {
		newSize = int(rg.maxSize)
	}
	if newSize < requiredSize {
		rg.handler.registryOverflow()
		return
	}
	rg.handler.charge(chargeSize(newSize, valueBytes)) // luarun (memory.go)
	rg.forceResize(newSize)
} // +inline-end

func (rg *registry) forceResize(newSize int) {
	newSlice := make([]LValue, newSize)
	copy(newSlice, rg.array[:rg.top]) // should we copy the area beyond top? there shouldn't be any valid values there so it shouldn't be necessary.
	rg.array = newSlice
}

func (rg *registry) SetTop(topi int) { // +inline-start
	// +inline-call rg.checkSize topi
	oldtopi := rg.top
	rg.top = topi
	for i := oldtopi; i < rg.top; i++ {
		rg.array[i] = LNil
	}
	// values beyond top don't need to be valid LValues, so setting them to nil is fine
	// setting them to nil rather than LNil lets us invoke the golang memclr opto
	// (luarun: for more than a few; memclrHasPointers's bulk write barrier
	// costs more than the stores of the one or two values a resume clears)
	if oldtopi-rg.top > 4 {
		nilRange := rg.array[rg.top:oldtopi]
		for i := range nilRange {
			nilRange[i] = nil
		}
	} else {
		for i := rg.top; i < oldtopi; i++ {
			rg.array[i] = nil
		}
	}
	//for i := rg.top; i < oldtop; i++ {
	//	rg.array[i] = LNil
	//}
} // +inline-end

func (rg *registry) Top() int {
	return rg.top
}

func (rg *registry) Push(v LValue) {
	newSize := rg.top + 1
	// +inline-call rg.checkSize newSize
	rg.array[rg.top] = v
	rg.top++
}

func (rg *registry) Pop() LValue {
	v := rg.array[rg.top-1]
	rg.array[rg.top-1] = LNil
	rg.top--
	return v
}

func (rg *registry) Get(reg int) LValue {
	return rg.array[reg]
}

// CopyRange will move a section of values from index `start` to index `regv`
// It will move `n` values.
// `limit` specifies the maximum end range that can be copied from. If it's set to -1, then it defaults to stopping at
// the top of the registry (values beyond the top are not initialized, so if specifying an alternative `limit` you should
// pass a value <= rg.top.
// If start+n is beyond the limit, then nil values will be copied to the destination slots.
// After the copy, the registry is truncated to be at the end of the copied range, ie the original of the copied values
// are nilled out. (So top will be regv+n)
// CopyRange should ideally be renamed to MoveRange.
func (rg *registry) CopyRange(regv, start, limit, n int) { // +inline-start
	newSize := regv + n
	// +inline-call rg.checkSize newSize
	if limit == -1 || limit > rg.top {
		limit = rg.top
	}
	for i := 0; i < n; i++ {
		srcIdx := start + i
		if srcIdx >= limit || srcIdx < 0 {
			rg.array[regv+i] = LNil
		} else {
			rg.array[regv+i] = rg.array[srcIdx]
		}
	}

	// values beyond top don't need to be valid LValues, so setting them to nil is fine
	// setting them to nil rather than LNil lets us invoke the golang memclr opto
	oldtop := rg.top
	rg.top = regv + n
	if rg.top < oldtop {
		nilRange := rg.array[rg.top:oldtop]
		for i := range nilRange {
			nilRange[i] = nil
		}
	}
} // +inline-end

// FillNil fills the registry with nil values from regm to regm+n and then sets the registry top to regm+n
func (rg *registry) FillNil(regm, n int) { // +inline-start
	newSize := regm + n
	// +inline-call rg.checkSize newSize
	for i := 0; i < n; i++ {
		rg.array[regm+i] = LNil
	}
	// values beyond top don't need to be valid LValues, so setting them to nil is fine
	// setting them to nil rather than LNil lets us invoke the golang memclr opto
	oldtop := rg.top
	rg.top = regm + n
	if rg.top < oldtop {
		nilRange := rg.array[rg.top:oldtop]
		for i := range nilRange {
			nilRange[i] = nil
		}
	}
} // +inline-end

func (rg *registry) Insert(value LValue, reg int) {
	top := rg.Top()
	if reg >= top {
		// +inline-call rg.Set reg value
		return
	}
	top--
	for ; top >= reg; top-- {
		// FIXME consider using copy() here if Insert() is called enough
		// +inline-call rg.Set top+1 rg.Get(top)
	}
	// +inline-call rg.Set reg value
}

func (rg *registry) Set(regi int, vali LValue) { // +inline-start
	newSize := regi + 1
	// +inline-call rg.checkSize newSize
	rg.array[regi] = vali
	if regi >= rg.top {
		rg.top = regi + 1
	}
} // +inline-end

func (rg *registry) SetNumber(regi int, vali LNumber) { // +inline-start
	newSize := regi + 1
	// +inline-call rg.checkSize newSize
	rg.array[regi] = rg.alloc.LNumber2I(vali)
	if regi >= rg.top {
		rg.top = regi + 1
	}
} // +inline-end

func (rg *registry) IsFull() bool {
	return rg.top >= cap(rg.array)
}

/* }}} */

/* Global {{{ */

func newGlobal() *Global {
	g := &Global{
		MainThread: nil,
		// luarun: it grows as keys come (gopher-lua made maps for 32 and
		// 64 keys, ~3 KB, which an embedder that sets its own drops), and
		// the registry is made by its first use (Registry).
		Global:  newLTable(0, 0),
		memLeft: math.MaxInt64, // luarun: no owner charges it (memory.go)
	}
	g.Views.g = g
	g.home.g = g
	g.Global.home = &g.home
	return g
}

/* }}} */

/* package local methods {{{ */

func panicWithTraceback(L *LState) {
	err := newApiError(ApiErrorRun, L.Get(-1))
	err.StackTrace = L.stackTrace(0)
	panic(err)
}

func panicWithoutTraceback(L *LState) {
	err := newApiError(ApiErrorRun, L.Get(-1))
	panic(err)
}

func newLState(options Options) *LState {
	return newLStateOf(options, newGlobal(), newAllocator(32))
}

// newLStateOf makes a state of global state g with allocator al. luarun:
// NewThread passes its parent's, instead of making a Global (two tables
// and a map, ~7 KB) and an allocator only to drop or duplicate them: the
// threads of one state never run at the same time, so they can share
// the number allocator.
// stateAllocs is a state with its registry and frame stack, made in one
// allocation (luarun): they live exactly as long as the state, and every
// process makes two states when none is recycled (a spawn's four
// allocations fewer).
type stateAllocs struct {
	ls    LState
	reg   registry
	stack autoGrowingCallFrameStack
	segs  [1]*callFrameStackSegment
}

func newLStateOf(options Options, g *Global, al *allocator) *LState {
	a := &stateAllocs{}
	ls := &a.ls
	*ls = LState{
		G:       g,
		Parent:  nil,
		Panic:   panicWithTraceback,
		Dead:    false,
		Options: options,

		stop:         0,
		alloc:        al,
		currentFrame: nil,
		wrapped:      false,
		uvcache:      nil,
		hasErrorFunc: false,
		mainLoop:     mainLoop,
		ctx:          nil,
	}
	if options.MinimizeStackMemory {
		a.stack.init(int(options.CallStackSize), a.segs[:])
		ls.stack = &a.stack
	} else {
		ls.stack = newFixedCallFrameStack(int(options.CallStackSize))
	}
	a.reg.init(ls, int(options.RegistrySize), int(options.RegistryGrowStep), int(options.RegistryMaxSize), al)
	ls.reg = &a.reg
	ls.Env = ls.G.Global
	return ls
}

func (ls *LState) printReg() {
	println("-------------------------")
	println("thread:", ls)
	println("top:", ls.reg.Top())
	if ls.currentFrame != nil {
		println("function base:", ls.currentFrame.Base)
		println("return base:", ls.currentFrame.ReturnBase)
	} else {
		println("(vm not started)")
	}
	println("local base:", ls.currentLocalBase())
	for i := 0; i < ls.reg.Top(); i++ {
		println(i, ls.reg.Get(i).String())
	}
	println("-------------------------")
}

func (ls *LState) printCallStack() {
	println("-------------------------")
	for i := 0; i < ls.stack.Sp(); i++ {
		print(i)
		print(" ")
		frame := ls.stack.At(i)
		if frame == nil {
			break
		}
		if frame.Fn.IsG {
			println("IsG:", true, "Frame:", frame, "Fn:", frame.Fn)
		} else {
			println("IsG:", false, "Frame:", frame, "Fn:", frame.Fn, "pc:", frame.Pc)
		}
	}
	println("-------------------------")
}

func (ls *LState) closeAllUpvalues() { // +inline-start
	for cf := ls.currentFrame; cf != nil; cf = cf.Parent {
		if !cf.Fn.IsG {
			ls.closeUpvalues(cf.LocalBase)
		}
	}
} // +inline-end

func (ls *LState) raiseError(level int, format string, args ...interface{}) {
	if !ls.hasErrorFunc {
		ls.closeAllUpvalues()
	}
	message := format
	if len(args) > 0 {
		message = fmt.Sprintf(format, args...)
	}
	if level > 0 {
		message = ls.errorWhere(level) + message
	}
	if ls.reg.IsFull() {
		// if the registry is full then it won't be possible to push a value, in this case, force a larger size
		ls.reg.forceResize(ls.reg.Top() + 1)
	}
	ls.reg.Push(LString(message))
	ls.Panic(ls)
}

// errorWhere is the position an error raised at level gets, as Lua 5.1's
// luaL_where gives it: "chunk:line: " of the function level calls up
// from a running Go function (1 is its caller), and nothing when that
// function is a Go one (pcall(string.rep) fails with no position). An
// error the VM raises while a Lua function runs (no Go frame on top) is
// that function's own, as 5.1's luaG_runerror. luarun: gopher-lua skipped
// Go frames to the nearest Lua one and counted levels from the running Go
// function, so error("x", 2) named the caller of error, not its caller.
func (ls *LState) errorWhere(level int) string {
	if cf := ls.currentFrame; cf != nil && !cf.Fn.IsG {
		level--
	}
	dbg, ok := ls.GetStack(level)
	if !ok || dbg.frame == nil || dbg.frame.Fn.IsG || dbg.frame.Pc < 1 {
		return ""
	}
	proto := dbg.frame.Fn.Proto
	return fmt.Sprintf("%v:%v: ", ProtoPositionSource(proto), proto.DbgSourcePositions[dbg.frame.Pc-1])
}

func (ls *LState) findLocal(frame *callFrame, no int) string {
	fn := frame.Fn
	if !fn.IsG {
		if name, ok := fn.LocalName(no, frame.Pc-1); ok {
			return name
		}
	}
	if no <= 0 { // luarun: 5.1's findlocal counts from 1
		return ""
	}
	var top int
	if ls.currentFrame == frame {
		top = ls.reg.Top()
	} else if int(frame.Idx)+1 < ls.stack.Sp() {
		top = ls.stack.At(int(frame.Idx) + 1).Base
	} else {
		return ""
	}
	if top-frame.LocalBase >= no {
		return "(*temporary)"
	}
	return ""
}

func (ls *LState) where(level int, skipg bool) string {
	dbg, ok := ls.GetStack(level)
	if !ok || dbg.frame == nil {
		return ""
	}
	cf := dbg.frame
	proto := cf.Fn.Proto
	sourcename := "[G]"
	if proto != nil {
		sourcename = ProtoPositionSource(proto)
	} else if skipg {
		return ls.where(level+1, skipg)
	}
	line := ""
	if proto != nil {
		line = fmt.Sprintf("%v:", proto.DbgSourcePositions[cf.Pc-1])
	}
	return fmt.Sprintf("%v:%v", sourcename, line)
}

func (ls *LState) stackTrace(level int) string {
	buf := []string{}
	header := "stack traceback:"
	if ls.currentFrame != nil {
		for i := 0; ; i++ {
			dbg, ok := ls.GetStack(i)
			if !ok {
				break
			}
			if dbg.frame == nil { // a call lost to a tail call, as 5.1 writes it
				buf = append(buf, "\t(tail call): ?")
				continue
			}
			buf = append(buf, fmt.Sprintf("\t%v in %v", ls.Where(i), ls.formattedFrameFuncName(dbg.frame)))
		}
	}
	buf = append(buf, fmt.Sprintf("\t%v: %v", "[G]", "?"))
	buf = buf[intMax(0, intMin(level, len(buf))):len(buf)]
	if len(buf) > 20 {
		newbuf := make([]string, 0, 20)
		newbuf = append(newbuf, buf[0:7]...)
		newbuf = append(newbuf, "\t...")
		newbuf = append(newbuf, buf[len(buf)-7:len(buf)]...)
		buf = newbuf
	}
	return fmt.Sprintf("%s\n%s", header, strings.Join(buf, "\n"))
}

func (ls *LState) formattedFrameFuncName(fr *callFrame) string {
	name, ischunk := ls.frameFuncName(fr)
	if ischunk {
		return name
	}
	if name[0] != '(' && name[0] != '<' {
		return fmt.Sprintf("function '%s'", name)
	}
	return fmt.Sprintf("function %s", name)
}

func (ls *LState) rawFrameFuncName(fr *callFrame) string {
	name, _ := ls.frameFuncName(fr)
	return name
}

func (ls *LState) frameFuncName(fr *callFrame) (string, bool) {
	frame := fr.Parent
	if frame == nil {
		if ls.Parent == nil {
			return "main chunk", true
		} else {
			return "corountine", true
		}
	}
	if !frame.Fn.IsG {
		pc := frame.Pc - 1
		for _, call := range frame.Fn.Proto.DbgCalls {
			if call.Pc == pc {
				name := call.Name
				if (name == "?" || fr.TailCall > 0) && !fr.Fn.IsG {
					name = fmt.Sprintf("<%v:%v>", ProtoPositionSource(fr.Fn.Proto), fr.Fn.Proto.LineDefined)
				}
				return name, false
			}
		}
	}
	if !fr.Fn.IsG {
		return fmt.Sprintf("<%v:%v>", ProtoPositionSource(fr.Fn.Proto), fr.Fn.Proto.LineDefined), false
	}
	return "(anonymous)", false
}

func (ls *LState) isStarted() bool {
	return ls.currentFrame != nil
}

func (ls *LState) kill() {
	ls.Dead = true
	if ls.ctxCancelFn != nil {
		ls.ctxCancelFn()
	}
}

func (ls *LState) indexToReg(idx int) int {
	base := ls.currentLocalBase()
	if idx > 0 {
		return base + idx - 1
	} else if idx == 0 {
		return -1
	} else {
		tidx := ls.reg.Top() + idx
		if tidx < base {
			return -1
		}
		return tidx
	}
}

func (ls *LState) currentLocalBase() int {
	base := 0
	if ls.currentFrame != nil {
		base = ls.currentFrame.LocalBase
	}
	return base
}

func (ls *LState) currentEnv() *LTable {
	return ls.Env
	/*
		if ls.currentFrame == nil {
			return ls.Env
		}
		return ls.currentFrame.Fn.Env
	*/
}

func (ls *LState) rkValue(idx int) LValue {
	/*
		if OpIsK(idx) {
			return ls.currentFrame.Fn.Proto.Constants[opIndexK(idx)]
		}
		return ls.reg.Get(ls.currentFrame.LocalBase + idx)
	*/
	if (idx & opBitRk) != 0 {
		return ls.currentFrame.Fn.Proto.Constants[idx & ^opBitRk]
	}
	return ls.reg.array[ls.currentFrame.LocalBase+idx]
}

func (ls *LState) rkString(idx int) string {
	if (idx & opBitRk) != 0 {
		return ls.currentFrame.Fn.Proto.stringConstants[idx & ^opBitRk]
	}
	return string(ls.reg.array[ls.currentFrame.LocalBase+idx].(LString))
}

// rkStringH is rkString with the string's strHash (luarun: a constant's
// was hashed by the compiler).
func (ls *LState) rkStringH(idx int) (string, uint32) {
	if (idx & opBitRk) != 0 {
		p := ls.currentFrame.Fn.Proto
		return p.stringConstants[idx & ^opBitRk], p.stringHashes[idx & ^opBitRk]
	}
	s := string(ls.reg.array[ls.currentFrame.LocalBase+idx].(LString))
	return s, strHash(s)
}

func (ls *LState) closeUpvalues(idx int) { // +inline-start
	if ls.uvcache != nil {
		var prev *Upvalue
		for uv := ls.uvcache; uv != nil; uv = uv.next {
			if uv.index >= idx {
				if prev != nil {
					prev.next = nil
				} else {
					ls.uvcache = nil
				}
				uv.Close()
			}
			prev = uv
		}
	}
} // +inline-end

func (ls *LState) findUpvalue(idx int) *Upvalue {
	var prev *Upvalue
	var next *Upvalue
	if ls.uvcache != nil {
		for uv := ls.uvcache; uv != nil; uv = uv.next {
			if uv.index == idx {
				return uv
			}
			if uv.index > idx {
				next = uv
				break
			}
			prev = uv
		}
	}
	uv := &Upvalue{reg: ls.reg, index: idx, closed: false}
	if prev != nil {
		prev.next = uv
	} else {
		ls.uvcache = uv
	}
	if next != nil {
		uv.next = next
	}
	return uv
}

func (ls *LState) metatable(lvalue LValue, rawget bool) LValue {
	var metatable LValue = LNil
	switch obj := lvalue.(type) {
	case *LTable:
		metatable = obj.Metatable
	case *LUserData:
		metatable = obj.Metatable
	default:
		if table := ls.G.builtinMts[int(obj.Type())]; table != nil {
			metatable = table
		}
	}

	if !rawget && metatable != LNil {
		metatable = ls.visibleMetatable(lvalue, metatable)
		oldmt := metatable
		if tb, ok := metatable.(*LTable); ok {
			metatable = tb.RawGetString("__metatable")
			if metatable == LNil {
				metatable = oldmt
			}
		}
	}

	return metatable
}

func (ls *LState) metaOp1(lvalue LValue, event string) LValue {
	if mt := ls.metatable(lvalue, true); mt != LNil {
		if tb, ok := mt.(*LTable); ok {
			return tb.RawGetString(event)
		}
	}
	return LNil
}

// metaOp1H is metaOp1 of an event whose strHash is h (luarun).
func (ls *LState) metaOp1H(lvalue LValue, event string, h uint32) LValue {
	if mt := ls.metatable(lvalue, true); mt != LNil {
		if tb, ok := mt.(*LTable); ok {
			return tb.rawGetStringH(event, h)
		}
	}
	return LNil
}

func (ls *LState) metaOp2(value1, value2 LValue, event string) LValue {
	if mt := ls.metatable(value1, true); mt != LNil {
		if tb, ok := mt.(*LTable); ok {
			if ret := tb.RawGetString(event); ret != LNil {
				return ret
			}
		}
	}
	if mt := ls.metatable(value2, true); mt != LNil {
		if tb, ok := mt.(*LTable); ok {
			return tb.RawGetString(event)
		}
	}
	return LNil
}

func (ls *LState) metaCall(lvalue LValue) (*LFunction, bool) {
	if fn, ok := lvalue.(*LFunction); ok {
		return fn, false
	}
	if fn, ok := ls.metaOp1(lvalue, "__call").(*LFunction); ok {
		return fn, true
	}
	return nil, false
}

func (ls *LState) initCallFrame(cf *callFrame) { // +inline-start
	if cf.Fn.IsG {
		ls.reg.SetTop(cf.LocalBase + int(cf.NArgs))
	} else {
		proto := cf.Fn.Proto
		nargs := int(cf.NArgs)
		np := int(proto.NumParameters)
		if nargs < np {
			// default any missing arguments to nil
			newSize := cf.LocalBase + np
			// +inline-call ls.reg.checkSize newSize
			for i := nargs; i < np; i++ {
				ls.reg.array[cf.LocalBase+i] = LNil
			}
			nargs = np
			ls.reg.top = newSize
		}

		if (proto.IsVarArg & VarArgIsVarArg) == 0 {
			if nargs < int(proto.NumUsedRegisters) {
				nargs = int(proto.NumUsedRegisters)
			}
			newSize := cf.LocalBase + nargs
			// +inline-call ls.reg.checkSize newSize
			for i := np; i < nargs; i++ {
				ls.reg.array[cf.LocalBase+i] = LNil
			}
			ls.reg.top = cf.LocalBase + int(proto.NumUsedRegisters)
		} else {
			/* swap vararg positions:
					   closure
					   namedparam1 <- lbase
					   namedparam2
					   vararg1
					   vararg2

			           TO

					   closure
					   nil
					   nil
					   vararg1
					   vararg2
					   namedparam1 <- lbase
					   namedparam2
			*/
			nvarargs := nargs - np
			if nvarargs < 0 {
				nvarargs = 0
			}

			ls.reg.SetTop(cf.LocalBase + nargs + np)
			for i := 0; i < np; i++ {
				//ls.reg.Set(cf.LocalBase+nargs+i, ls.reg.Get(cf.LocalBase+i))
				ls.reg.array[cf.LocalBase+nargs+i] = ls.reg.array[cf.LocalBase+i]
				//ls.reg.Set(cf.LocalBase+i, LNil)
				ls.reg.array[cf.LocalBase+i] = LNil
			}

			if CompatVarArg {
				ls.reg.SetTop(cf.LocalBase + nargs + np + 1)
				if (proto.IsVarArg & VarArgNeedsArg) != 0 {
					argtb := newTableIn(&ls.G.home, nvarargs, 0)
					for i := 0; i < nvarargs; i++ {
						argtb.RawSetInt(i+1, ls.reg.Get(cf.LocalBase+np+i))
					}
					argtb.RawSetString("n", LNumber(nvarargs))
					//ls.reg.Set(cf.LocalBase+nargs+np, argtb)
					ls.reg.array[cf.LocalBase+nargs+np] = argtb
				} else {
					ls.reg.array[cf.LocalBase+nargs+np] = LNil
				}
			}
			cf.LocalBase += nargs
			maxreg := cf.LocalBase + int(proto.NumUsedRegisters)
			ls.reg.SetTop(maxreg)
		}
	}
} // +inline-end

func (ls *LState) pushCallFrame(cf callFrame, fn LValue, meta bool) { // +inline-start
	if meta {
		cf.NArgs++
		ls.reg.Insert(fn, cf.LocalBase)
	}
	if cf.Fn == nil {
		ls.callError(fn)
	}
	if ls.stack.IsFull() {
		ls.RaiseError("stack overflow")
	}
	ls.stack.Push(cf)
	newcf := ls.stack.Last()
	// +inline-call ls.initCallFrame newcf
	ls.currentFrame = newcf
} // +inline-end

func (ls *LState) callR(nargs, nret, rbase int) {
	base := ls.reg.Top() - nargs - 1
	if rbase < 0 {
		rbase = base
	}
	lv := ls.reg.Get(base)
	fn, meta := ls.metaCall(lv)
	ls.pushCallFrame(callFrame{
		Fn:         fn,
		Pc:         0,
		Base:       base,
		LocalBase:  base + 1,
		ReturnBase: rbase,
		NArgs:      int32(nargs),
		NRet:       int32(nret),
		Parent:     ls.currentFrame,
		TailCall:   0,
	}, lv, meta)
	ls.nCcalls++ // luarun: a yield cannot cross this call (value.go)
	if ls.G.MainThread == nil {
		ls.G.MainThread = ls
		ls.G.CurrentThread = ls
		ls.mainLoop(ls, nil)
	} else {
		ls.mainLoop(ls, ls.currentFrame)
	}
	ls.nCcalls--
	if nret != MultRet {
		ls.reg.SetTop(rbase + nret)
	}
}

func (ls *LState) getField(obj LValue, key LValue) LValue {
	curobj := obj
	for i := 0; i < MaxTableGetLoop; i++ {
		tb, istable := curobj.(*LTable)
		if istable {
			ret := tb.RawGet(key)
			if ret != LNil {
				return ret
			}
		}
		metaindex := ls.metaOp1(curobj, "__index")
		if metaindex == LNil {
			if !istable {
				ls.indexError(curobj, i == 0)
			}
			return LNil
		}
		if metaindex.Type() == LTFunction {
			ls.reg.Push(metaindex)
			ls.reg.Push(curobj)
			ls.reg.Push(key)
			ls.Call(2, 1)
			return ls.reg.Pop()
		} else {
			curobj = metaindex
		}
	}
	ls.RaiseError("too many recursions in gettable")
	return nil
}

func (ls *LState) getFieldString(obj LValue, key string) LValue {
	return ls.getFieldStringH(obj, key, strHash(key))
}

// getFieldStringH is getFieldString of a key whose strHash is h.
func (ls *LState) getFieldStringH(obj LValue, key string, h uint32) LValue {
	curobj := obj
	for i := 0; i < MaxTableGetLoop; i++ {
		tb, istable := curobj.(*LTable)
		if istable {
			ret := tb.rawGetStringH(key, h)
			if ret != LNil {
				return ret
			}
		}
		metaindex := ls.metaOp1H(curobj, "__index", hashIndex)
		if metaindex == LNil {
			if !istable {
				ls.indexError(curobj, i == 0)
			}
			return LNil
		}
		if metaindex.Type() == LTFunction {
			ls.reg.Push(metaindex)
			ls.reg.Push(curobj)
			ls.reg.Push(LString(key))
			ls.Call(2, 1)
			return ls.reg.Pop()
		} else {
			curobj = metaindex
		}
	}
	ls.RaiseError("too many recursions in gettable")
	return nil
}

func (ls *LState) setField(obj LValue, key LValue, value LValue) {
	if tb, ok := obj.(*LTable); ok {
		if _, ok := tb.Metatable.(*LTable); !ok {
			// luarun: no __newindex: a raw set, in one lookup
			ls.RawSet(tb, key, value)
			return
		}
	}
	curobj := obj
	for i := 0; i < MaxTableGetLoop; i++ {
		tb, istable := curobj.(*LTable)
		if istable {
			if tb.RawGet(key) != LNil {
				ls.RawSet(tb, key, value)
				return
			}
		}
		metaindex := ls.metaOp1(curobj, "__newindex")
		if metaindex == LNil {
			if !istable {
				ls.indexError(curobj, i == 0)
			}
			ls.RawSet(tb, key, value)
			return
		}
		if metaindex.Type() == LTFunction {
			ls.reg.Push(metaindex)
			ls.reg.Push(curobj)
			ls.reg.Push(key)
			ls.reg.Push(value)
			ls.Call(3, 0)
			return
		} else {
			curobj = metaindex
		}
	}
	ls.RaiseError("too many recursions in settable")
}

func (ls *LState) setFieldString(obj LValue, key string, value LValue) {
	ls.setFieldStringK(obj, key, strHash(key), nil, value)
}

// setFieldStringK is setFieldString with the key's box, or nil (luarun:
// OP_SETTABLEKS and OP_SETGLOBAL pass their constant's, so a new field
// boxes nothing), and a table's own field set in one lookup.
func (ls *LState) setFieldStringK(obj LValue, key string, h uint32, boxed LValue, value LValue) {
	if tb, ok := obj.(*LTable); ok {
		mt, _ := tb.Metatable.(*LTable)
		if mt == nil {
			// no __newindex: a raw set, whether the key is there or not
			tb.rawSetStringK(key, h, boxed, value)
			return
		}
		if tb.flags&(flagView|flagShared) == 0 {
			// one lookup: the key's node, then __newindex only when the
			// key has no value
			if tb.setStrExisting(key, h, boxed, value, false) ||
				mt.rawGetStringH("__newindex", hashNewindex) == LNil && tb.setStrExisting(key, h, boxed, value, true) {
				return
			}
		} else if tb.setExistingString(key, h, value) {
			return
		}
	}
	curobj := obj
	for i := 0; i < MaxTableGetLoop; i++ {
		tb, istable := curobj.(*LTable)
		if istable {
			if tb.rawGetStringH(key, h) != LNil {
				tb.rawSetStringK(key, h, boxed, value)
				return
			}
		}
		metaindex := ls.metaOp1(curobj, "__newindex")
		if metaindex == LNil {
			if !istable {
				ls.indexError(curobj, i == 0)
			}
			tb.rawSetStringK(key, h, boxed, value)
			return
		}
		if metaindex.Type() == LTFunction {
			ls.reg.Push(metaindex)
			ls.reg.Push(curobj)
			if boxed == nil {
				boxed = LString(key)
			}
			ls.reg.Push(boxed)
			ls.reg.Push(value)
			ls.Call(3, 0)
			return
		} else {
			curobj = metaindex
		}
	}
	ls.RaiseError("too many recursions in settable")
}

/* }}} */

/* api methods {{{ */

func NewState(opts ...Options) *LState {
	var ls *LState
	if len(opts) == 0 {
		ls = newLState(Options{
			CallStackSize: int32(CallStackSize),
			RegistrySize:  int32(RegistrySize),
		})
		ls.OpenLibs()
	} else {
		if opts[0].CallStackSize < 1 {
			opts[0].CallStackSize = int32(CallStackSize)
		}
		// luarun: a small first size is kept when the registry may grow
		// (gopher-lua took any size under 128 for a mistake).
		if opts[0].RegistrySize < 1 || opts[0].RegistrySize < 128 && opts[0].RegistryMaxSize < 128 {
			opts[0].RegistrySize = int32(RegistrySize)
		}
		if opts[0].RegistryMaxSize < opts[0].RegistrySize {
			opts[0].RegistryMaxSize = 0 // disable growth if max size is smaller than initial size
		} else {
			// if growth enabled, grow step is set
			if opts[0].RegistryGrowStep < 1 {
				opts[0].RegistryGrowStep = int32(RegistryGrowStep)
			}
		}
		ls = newLState(opts[0])
		if !opts[0].SkipOpenLibs {
			ls.OpenLibs()
		}
	}
	return ls
}

func (ls *LState) IsClosed() bool {
	return ls.stack == nil
}

func (ls *LState) Close() {
	if ls.G.gcs() != nil && ls.stack != nil && (ls.G.MainThread == nil || ls.G.MainThread == ls) {
		CloseFinalizers(ls) // luarun: 5.1's lua_close runs them (gc.go)
	}
	atomic.AddInt32(&ls.stop, 1)
	for _, file := range ls.tempFiles() {
		// ignore errors in these operations
		file.Close()
		os.Remove(file.Name())
	}
	ls.stack.FreeAll()
	ls.stack = nil
}

/* registry operations {{{ */

func (ls *LState) GetTop() int {
	return ls.reg.Top() - ls.currentLocalBase()
}

func (ls *LState) SetTop(idx int) {
	base := ls.currentLocalBase()
	newtop := ls.indexToReg(idx) + 1
	if newtop < base {
		ls.reg.SetTop(base)
	} else {
		ls.reg.SetTop(newtop)
	}
}

func (ls *LState) Replace(idx int, value LValue) {
	base := ls.currentLocalBase()
	if idx > 0 {
		reg := base + idx - 1
		if reg < ls.reg.Top() {
			ls.reg.Set(reg, value)
		}
	} else if idx == 0 {
	} else if idx > RegistryIndex {
		if tidx := ls.reg.Top() + idx; tidx >= base {
			ls.reg.Set(tidx, value)
		}
	} else {
		switch idx {
		case RegistryIndex:
			if tb, ok := value.(*LTable); ok {
				ls.G.registry = tb
			} else {
				ls.RaiseError("registry must be a table(%v)", value.Type().String())
			}
		case EnvironIndex:
			if ls.currentFrame == nil {
				ls.RaiseError("no calling environment")
			}
			if tb, ok := value.(*LTable); ok {
				ls.currentFrame.Fn.Env = tb
			} else {
				ls.RaiseError("environment must be a table(%v)", value.Type().String())
			}
		case GlobalsIndex:
			if tb, ok := value.(*LTable); ok {
				ls.G.Global = tb
			} else {
				ls.RaiseError("_G must be a table(%v)", value.Type().String())
			}
		default:
			fn := ls.currentFrame.Fn
			index := GlobalsIndex - idx - 1
			if index < len(fn.Upvalues) {
				fn.Upvalues[index].SetValue(value)
			}
		}
	}
}

func (ls *LState) Get(idx int) LValue {
	base := ls.currentLocalBase()
	if idx > 0 {
		reg := base + idx - 1
		if reg < ls.reg.Top() {
			return ls.reg.Get(reg)
		}
		return LNil
	} else if idx == 0 {
		return LNil
	} else if idx > RegistryIndex {
		tidx := ls.reg.Top() + idx
		if tidx < base {
			return LNil
		}
		return ls.reg.Get(tidx)
	} else {
		switch idx {
		case RegistryIndex:
			return ls.G.Registry()
		case EnvironIndex:
			if ls.currentFrame == nil {
				return ls.Env
			}
			return ls.currentFrame.Fn.Env
		case GlobalsIndex:
			return ls.G.Global
		default:
			fn := ls.currentFrame.Fn
			index := GlobalsIndex - idx - 1
			if index < len(fn.Upvalues) {
				return fn.Upvalues[index].Value()
			}
			return LNil
		}
	}
}

func (ls *LState) Push(value LValue) {
	ls.reg.Push(value)
}

func (ls *LState) Pop(n int) {
	for i := 0; i < n; i++ {
		if ls.GetTop() == 0 {
			ls.RaiseError("register underflow")
		}
		ls.reg.Pop()
	}
}

func (ls *LState) Insert(value LValue, index int) {
	reg := ls.indexToReg(index)
	top := ls.reg.Top()
	if reg >= top {
		ls.reg.Set(reg, value)
		return
	}
	if reg <= ls.currentLocalBase() {
		reg = ls.currentLocalBase()
	}
	top--
	for ; top >= reg; top-- {
		ls.reg.Set(top+1, ls.reg.Get(top))
	}
	ls.reg.Set(reg, value)
}

func (ls *LState) Remove(index int) {
	reg := ls.indexToReg(index)
	top := ls.reg.Top()
	switch {
	case reg >= top:
		return
	case reg < ls.currentLocalBase():
		return
	case reg == top-1:
		ls.Pop(1)
		return
	}
	for i := reg; i < top-1; i++ {
		ls.reg.Set(i, ls.reg.Get(i+1))
	}
	ls.reg.SetTop(top - 1)
}

/* }}} */

/* object allocation {{{ */

func (ls *LState) NewTable() *LTable {
	ls.charge(tableCharge(defaultArrayCap, defaultHashCap)) // luarun (memory.go)
	return newTableIn(&ls.G.home, defaultArrayCap, defaultHashCap)
}

func (ls *LState) CreateTable(acap, hcap int) *LTable {
	ls.charge(tableCharge(acap, hcap)) // luarun (memory.go)
	return newTableIn(&ls.G.home, acap, hcap)
}

// NewThread returns a new LState that shares with the original state all global objects.
// If the original state has context.Context, the new state has a new child context of the original state and this function returns its cancel function.
func (ls *LState) NewThread() (*LState, context.CancelFunc) {
	ls.charge(threadBytes + chargeSize(int(ls.Options.RegistrySize), valueBytes)) // luarun (memory.go)
	thread := newLStateOf(ls.Options, ls.G, ls.alloc)                             // luarun: no Global of its own to drop
	thread.Env = ls.Env
	var f context.CancelFunc = nil
	if ls.ctx != nil {
		thread.mainLoop = mainLoopWithContext
		thread.ctx, f = context.WithCancel(ls.ctx)
		thread.ctxCancelFn = f
	}
	if ls.interrupt != nil {
		thread.SetInterrupt(ls.interrupt)
	}
	return thread, f
}

// NewFunctionFromProto is proto's function in the state's environment;
// its upvalues, if it has any (an undumped function's), are fresh ones
// holding nil (luarun: they were nil pointers).
func (ls *LState) NewFunctionFromProto(proto *FunctionProto) *LFunction {
	return newLoadedFunction(proto, ls.Env)
}

func (ls *LState) NewUserData() *LUserData {
	return &LUserData{
		Env:       ls.currentEnv(),
		Metatable: LNil,
	}
}

func (ls *LState) NewFunction(fn LGFunction) *LFunction {
	return newLFunctionG(fn, ls.currentEnv(), 0)
}

func (ls *LState) NewClosure(fn LGFunction, upvalues ...LValue) *LFunction {
	cl := newLFunctionG(fn, ls.currentEnv(), len(upvalues))
	for i, lv := range upvalues {
		cl.Upvalues[i] = &Upvalue{}
		cl.Upvalues[i].Close()
		cl.Upvalues[i].SetValue(lv)
	}
	return cl
}

/* }}} */

/* toType {{{ */

func (ls *LState) ToBool(n int) bool {
	return LVAsBool(ls.Get(n))
}

func (ls *LState) ToInt(n int) int {
	if lv, ok := ls.Get(n).(LNumber); ok {
		return int(lv)
	}
	if lv, ok := ls.Get(n).(LString); ok {
		if num, err := parseNumber(string(lv)); err == nil {
			return int(num)
		}
	}
	return 0
}

func (ls *LState) ToInt64(n int) int64 {
	if lv, ok := ls.Get(n).(LNumber); ok {
		return int64(lv)
	}
	if lv, ok := ls.Get(n).(LString); ok {
		if num, err := parseNumber(string(lv)); err == nil {
			return int64(num)
		}
	}
	return 0
}

func (ls *LState) ToNumber(n int) LNumber {
	return LVAsNumber(ls.Get(n))
}

func (ls *LState) ToString(n int) string {
	return LVAsString(ls.Get(n))
}

func (ls *LState) ToTable(n int) *LTable {
	if lv, ok := ls.Get(n).(*LTable); ok {
		return lv
	}
	return nil
}

func (ls *LState) ToFunction(n int) *LFunction {
	if lv, ok := ls.Get(n).(*LFunction); ok {
		return lv
	}
	return nil
}

func (ls *LState) ToUserData(n int) *LUserData {
	if lv, ok := ls.Get(n).(*LUserData); ok {
		return lv
	}
	return nil
}

func (ls *LState) ToThread(n int) *LState {
	if lv, ok := ls.Get(n).(*LState); ok {
		return lv
	}
	return nil
}

/* }}} */

/* error & debug operations {{{ */

func (ls *LState) registryOverflow() {
	ls.RaiseError("registry overflow")
}

// This function is equivalent to luaL_error( http://www.lua.org/manual/5.1/manual.html#luaL_error ).
func (ls *LState) RaiseError(format string, args ...interface{}) {
	ls.raiseError(1, format, args...)
}

// This function is equivalent to lua_error( http://www.lua.org/manual/5.1/manual.html#lua_error ).
func (ls *LState) Error(lv LValue, level int) {
	if str, ok := lv.(LString); ok {
		ls.raiseError(level, "%s", string(str))
	} else {
		if !ls.hasErrorFunc {
			ls.closeAllUpvalues()
		}
		ls.Push(lv)
		ls.Panic(ls)
	}
}

func (ls *LState) GetInfo(what string, dbg *Debug, fn LValue) (LValue, error) {
	if !strings.HasPrefix(what, ">") {
		if dbg.tail {
			return LNil, dbg.tailCallInfo(what)
		}
		fn = dbg.frame.Fn
	} else {
		what = what[1:]
	}
	f, ok := fn.(*LFunction)
	if !ok {
		return LNil, newApiErrorS(ApiErrorRun, "can not get debug info(an object in not a function)")
	}

	retfn := false
	for _, c := range what {
		switch c {
		case 'f':
			retfn = true
		case 'S':
			if dbg.frame != nil && dbg.frame.Parent == nil {
				dbg.What = "main"
			} else if f.IsG {
				dbg.What = "G"
			} else {
				dbg.What = "Lua"
			}
			if !f.IsG {
				dbg.Source = f.Proto.SourceName
				dbg.LineDefined = f.Proto.LineDefined
				dbg.LastLineDefined = f.Proto.LastLineDefined
			}
		case 'l':
			if !f.IsG && dbg.frame != nil {
				if dbg.frame.Pc > 0 {
					dbg.CurrentLine = f.Proto.DbgSourcePositions[dbg.frame.Pc-1]
				}
			} else {
				dbg.CurrentLine = -1
			}
		case 'u':
			dbg.NUpvalues = len(f.Upvalues)
		case 'n':
			if dbg.frame != nil {
				dbg.Name = ls.rawFrameFuncName(dbg.frame)
			}
		default:
			return LNil, newApiErrorS(ApiErrorRun, "invalid what: "+string(c))
		}
	}

	if retfn {
		return f, nil
	}
	return LNil, nil

}

func (ls *LState) GetStack(level int) (*Debug, bool) {
	frame := ls.currentFrame
	for ; level > 0 && frame != nil; frame = frame.Parent {
		level--
		if !frame.Fn.IsG {
			level -= int(frame.TailCall)
		}
	}

	if level == 0 && frame != nil {
		return &Debug{frame: frame}, true
	} else if level < 0 {
		return &Debug{tail: true}, true // a call lost to a tail call (5.1: i_ci 0)
	}
	return &Debug{}, false
}

// IsTailCall reports whether dbg is a level of the stack that a tail call
// replaced (Lua 5.1's "(tail call)" levels, luarun): it has no function,
// GetInfo describes it as 5.1's info_tailcall does, it has no locals.
func (dbg *Debug) IsTailCall() bool { return dbg.tail }

// tailCallInfo is GetInfo of a lost tail call: 5.1's info_tailcall.
func (dbg *Debug) tailCallInfo(what string) error {
	for _, c := range what {
		if !strings.ContainsRune("fSlun", c) {
			return newApiErrorS(ApiErrorRun, "invalid what: "+string(c))
		}
	}
	dbg.Name, dbg.What, dbg.Source = "", "tail", "=(tail call)"
	dbg.CurrentLine, dbg.LineDefined, dbg.LastLineDefined = -1, -1, -1
	dbg.NUpvalues = 0
	return nil
}

// GetLocalAt is GetLocal of the frame at index idx of ls's call stack
// (luarun: a frame found by its Parent links, which GetStack's levels do
// not reach after a tail call).
func (ls *LState) GetLocalAt(idx, no int) (string, LValue) {
	if idx < 0 || idx >= ls.stack.Sp() {
		return "", LNil
	}
	return ls.GetLocal(&Debug{frame: ls.stack.At(idx)}, no)
}

// ExtendCallStack lets ls's call stack hold n more frames than
// Options.CallStackSize until restore is called (luarun): room for an
// error handler to run where a stack overflow was raised, as Lua 5.1
// grows its call-info array past LUAI_MAXCALLS for it. A state with
// MinimizeStackMemory unset gets no room (its stack cannot grow).
func (ls *LState) ExtendCallStack(n int) (restore func()) {
	return ls.stack.Extend(n)
}

// SetLocalAt is SetLocal of the frame at index idx of ls's call stack
// (luarun: as GetLocalAt).
func (ls *LState) SetLocalAt(idx, no int, lv LValue) string {
	if idx < 0 || idx >= ls.stack.Sp() {
		return ""
	}
	return ls.SetLocal(&Debug{frame: ls.stack.At(idx)}, no, lv)
}

func (ls *LState) GetLocal(dbg *Debug, no int) (string, LValue) {
	frame := dbg.frame
	if frame == nil { // a lost tail call
		return "", LNil
	}
	if name := ls.findLocal(frame, no); len(name) > 0 {
		return name, ls.reg.Get(frame.LocalBase + no - 1)
	}
	return "", LNil
}

func (ls *LState) SetLocal(dbg *Debug, no int, lv LValue) string {
	frame := dbg.frame
	if frame == nil { // a lost tail call
		return ""
	}
	if name := ls.findLocal(frame, no); len(name) > 0 {
		ls.reg.Set(frame.LocalBase+no-1, lv)
		return name
	}
	return ""
}

func (ls *LState) GetUpvalue(fn *LFunction, no int) (string, LValue) {
	if fn.IsG {
		return "", LNil
	}

	no--
	if no >= 0 && no < len(fn.Upvalues) {
		return fn.Proto.DbgUpvalues[no], fn.Upvalues[no].Value()
	}
	return "", LNil
}

func (ls *LState) SetUpvalue(fn *LFunction, no int, lv LValue) string {
	if fn.IsG {
		return ""
	}

	no--
	if no >= 0 && no < len(fn.Upvalues) {
		fn.Upvalues[no].SetValue(lv)
		return fn.Proto.DbgUpvalues[no]
	}
	return ""
}

/* }}} */

/* env operations {{{ */

func (ls *LState) GetFEnv(obj LValue) LValue {
	switch lv := obj.(type) {
	case *LFunction:
		return lv.Env
	case *LUserData:
		return lv.Env
	case *LState:
		return lv.Env
	}
	return LNil
}

func (ls *LState) SetFEnv(obj LValue, env LValue) {
	tb, ok := env.(*LTable)
	if !ok {
		ls.RaiseError("cannot use %v as an environment", env.Type().String())
	}

	switch lv := obj.(type) {
	case *LFunction:
		lv.Env = tb
	case *LUserData:
		lv.Env = tb
	case *LState:
		lv.Env = tb
	}
	/* do nothing */
}

/* }}} */

/* table operations {{{ */

func (ls *LState) RawGet(tb *LTable, key LValue) LValue {
	return tb.RawGet(key)
}

func (ls *LState) RawGetInt(tb *LTable, key int) LValue {
	return tb.RawGetInt(key)
}

func (ls *LState) GetField(obj LValue, skey string) LValue {
	return ls.getFieldString(obj, skey)
}

func (ls *LState) GetTable(obj LValue, key LValue) LValue {
	return ls.getField(obj, key)
}

func (ls *LState) RawSet(tb *LTable, key LValue, value LValue) {
	if n, ok := key.(LNumber); ok && math.IsNaN(float64(n)) {
		ls.RaiseError("table index is NaN")
	} else if key == LNil {
		ls.RaiseError("table index is nil")
	}
	tb.RawSet(key, value)
}

func (ls *LState) RawSetInt(tb *LTable, key int, value LValue) {
	tb.RawSetInt(key, value)
}

func (ls *LState) SetField(obj LValue, key string, value LValue) {
	ls.setFieldString(obj, key, value)
}

func (ls *LState) SetTable(obj LValue, key LValue, value LValue) {
	ls.setField(obj, key, value)
}

func (ls *LState) ForEach(tb *LTable, cb func(LValue, LValue)) {
	tb.ForEach(cb)
}

func (ls *LState) GetGlobal(name string) LValue {
	return ls.GetField(ls.Get(GlobalsIndex), name)
}

func (ls *LState) SetGlobal(name string, value LValue) {
	ls.SetField(ls.Get(GlobalsIndex), name, value)
}

func (ls *LState) Next(tb *LTable, key LValue) (LValue, LValue) {
	return tb.Next(key)
}

/* }}} */

/* unary operations {{{ */

func (ls *LState) ObjLen(v1 LValue) int {
	if v1.Type() == LTString {
		return len(string(v1.(LString)))
	}
	op := ls.metaOp1(v1, "__len")
	if op.Type() == LTFunction {
		ls.Push(op)
		ls.Push(v1)
		ls.Call(1, 1)
		ret := ls.reg.Pop()
		if ret.Type() == LTNumber {
			return int(ret.(LNumber))
		}
	} else if v1.Type() == LTTable {
		return v1.(*LTable).Len()
	}
	return 0
}

/* }}} */

/* binary operations {{{ */

func (ls *LState) Concat(values ...LValue) string {
	top := ls.reg.Top()
	for _, value := range values {
		ls.reg.Push(value)
	}
	ret := stringConcat(ls, len(values), ls.reg.Top()-1)
	ls.reg.SetTop(top)
	return LVAsString(ret)
}

func (ls *LState) LessThan(lhs, rhs LValue) bool {
	return lessThan(ls, lhs, rhs)
}

func (ls *LState) Equal(lhs, rhs LValue) bool {
	return equals(ls, lhs, rhs, false)
}

func (ls *LState) RawEqual(lhs, rhs LValue) bool {
	return equals(ls, lhs, rhs, true)
}

/* }}} */

/* register operations {{{ */

func (ls *LState) Register(name string, fn LGFunction) {
	ls.SetGlobal(name, ls.NewFunction(fn))
}

/* }}} */

/* load and function call operations {{{ */

// Load loads a chunk: a binary one (its first byte "\27", made by
// string.dump) is undumped, as in Lua 5.1, any other parsed (luarun).
func (ls *LState) Load(reader io.Reader, name string) (*LFunction, error) {
	proto, err := loadChunk(ls, reader, name)
	if err != nil {
		return nil, err
	}
	return newLoadedFunction(proto, ls.currentEnv()), nil
}

func (ls *LState) Call(nargs, nret int) {
	ls.callR(nargs, nret, -1)
}

func (ls *LState) PCall(nargs, nret int, errfunc *LFunction) (err error) {
	err = nil
	sp := ls.stack.Sp()
	base := ls.reg.Top() - nargs - 1
	nCcalls := ls.nCcalls // luarun: the nested calls the error unwound end
	oldpanic := ls.Panic
	ls.Panic = panicWithoutTraceback
	if errfunc != nil {
		ls.hasErrorFunc = true
	}
	defer func() {
		ls.Panic = oldpanic
		ls.hasErrorFunc = false
		rcv := recover()
		if rcv != nil {
			ls.nCcalls = nCcalls
			if gp := ls.escapingPanic(rcv); gp != nil {
				panic(gp)
			}
			if _, ok := rcv.(*ApiError); !ok {
				err = newApiErrorS(ApiErrorPanic, fmt.Sprint(rcv))
				if ls.Options.IncludeGoStackTrace {
					buf := make([]byte, 4096)
					runtime.Stack(buf, false)
					err.(*ApiError).StackTrace = strings.Trim(string(buf), "\000") + "\n" + ls.stackTrace(0)
				}
			} else {
				err = rcv.(*ApiError)
			}
			if errfunc != nil {
				ls.Push(errfunc)
				ls.Push(err.(*ApiError).Object)
				ls.Panic = panicWithoutTraceback
				defer func() {
					ls.Panic = oldpanic
					rcv := recover()
					if rcv != nil {
						ls.nCcalls = nCcalls
						if gp := ls.escapingPanic(rcv); gp != nil {
							panic(gp)
						}
						if _, ok := rcv.(*ApiError); !ok {
							err = newApiErrorS(ApiErrorPanic, fmt.Sprint(rcv))
							if ls.Options.IncludeGoStackTrace {
								buf := make([]byte, 4096)
								runtime.Stack(buf, false)
								err.(*ApiError).StackTrace = strings.Trim(string(buf), "\000") + ls.stackTrace(0)
							}
						} else {
							err = rcv.(*ApiError)
							err.(*ApiError).StackTrace = ls.stackTrace(0)
						}
						ls.stack.SetSp(sp)
						ls.currentFrame = ls.stack.Last()
						ls.reg.SetTop(base)
					}
				}()
				ls.Call(1, 1)
				err = newApiError(ApiErrorError, ls.Get(-1))
			} else if len(err.(*ApiError).StackTrace) == 0 {
				err.(*ApiError).StackTrace = ls.stackTrace(0)
			}
			ls.stack.SetSp(sp)
			ls.currentFrame = ls.stack.Last()
			ls.reg.SetTop(base)
		}
		ls.stack.SetSp(sp)
		if sp == 0 {
			ls.currentFrame = nil
		}
	}()

	ls.Call(nargs, nret)

	return
}

func (ls *LState) GPCall(fn LGFunction, data LValue) error {
	ls.Push(newLFunctionG(fn, ls.currentEnv(), 0))
	ls.Push(data)
	return ls.PCall(1, MultRet, nil)
}

func (ls *LState) CallByParam(cp P, args ...LValue) error {
	ls.Push(cp.Fn)
	for _, arg := range args {
		ls.Push(arg)
	}

	if cp.Protect {
		return ls.PCall(len(args), cp.NRet, cp.Handler)
	}
	ls.Call(len(args), cp.NRet)
	return nil
}

/* }}} */

/* metatable operations {{{ */

func (ls *LState) GetMetatable(obj LValue) LValue {
	return ls.metatable(obj, false)
}

// GetRawMetatable returns obj's metatable whatever its __metatable field
// says (debug.getmetatable).
func (ls *LState) GetRawMetatable(obj LValue) LValue {
	mt := ls.metatable(obj, true)
	if mt != LNil {
		mt = ls.visibleMetatable(obj, mt)
	}
	return mt
}

// visibleMetatable returns mt, obj's metatable, as a script may hold it
// (luarun): a shared type metatable becomes this state's view of it,
// which the type keeps from then on (cow.go).
func (ls *LState) visibleMetatable(obj, mt LValue) LValue {
	if t, ok := mt.(*LTable); ok && t.IsShared() {
		view := ls.G.Views.View(t)
		switch obj.(type) {
		case *LTable, *LUserData:
		default:
			ls.G.builtinMts[int(obj.Type())] = view
		}
		return view
	}
	return mt
}

func (ls *LState) SetMetatable(obj LValue, mt LValue) {
	switch mt.(type) {
	case *LNilType, *LTable:
	default:
		ls.RaiseError("metatable must be a table or nil, but got %v", mt.Type().String())
	}

	switch v := obj.(type) {
	case *LTable:
		v.Metatable = mt
		if m, ok := mt.(*LTable); ok && v.flags&flagWeak == 0 && mayBeWeak(m) {
			ls.G.noteMetatable(v, m) // luarun: weak tables (weak.go)
		}
	case *LUserData:
		v.Metatable = mt
		if m, ok := mt.(*LTable); ok && v.gc == gcNone && m.RawGetString("__gc") != LNil {
			ls.registerGC(v) // luarun: finalizers (gc.go)
		}
	default:
		t, _ := mt.(*LTable) // nil for LNil
		ls.G.builtinMts[int(obj.Type())] = t
	}
}

/* }}} */

/* coroutine operations {{{ */

func (ls *LState) Status(th *LState) string {
	status := "suspended"
	if th.Dead {
		status = "dead"
	} else if ls.G.CurrentThread == th {
		status = "running"
	} else if ls.Parent == th {
		status = "normal"
	}
	return status
}

func (ls *LState) Resume(th *LState, fn *LFunction, args ...LValue) (ResumeState, error, []LValue) {
	return ls.ResumeAppend(nil, th, fn, args...)
}

// ResumeAppend is Resume, appending the values it returns to dst
// (luarun: a caller with a buffer of its own, whose values it is done
// with once they are handed over, starts a coroutine without allocating
// the list of its results). dst may share its backing array with args:
// the arguments are pushed before any result is written.
func (ls *LState) ResumeAppend(dst []LValue, th *LState, fn *LFunction, args ...LValue) (ResumeState, error, []LValue) {
	if ls.G.MainThread == nil {
		// luarun: a state whose first call is a Resume from Go is the main
		// thread. Left unset, the coroutine's first call from Go (a
		// metamethod, say) took itself for the main thread's first call
		// and ran to the end of its stack instead of returning (callR).
		ls.G.MainThread, ls.G.CurrentThread = ls, ls
	}
	isstarted := th.isStarted()
	if !isstarted {
		base := 0
		th.stack.Push(callFrame{
			Fn:         fn,
			Pc:         0,
			Base:       base,
			LocalBase:  base + 1,
			ReturnBase: base,
			NArgs:      0,
			NRet:       MultRet,
			Parent:     nil,
			TailCall:   0,
		})
	}

	if ls.G.CurrentThread == th {
		return ResumeError, newApiErrorS(ApiErrorRun, "can not resume a running thread"), nil
	}
	if th.Dead {
		return ResumeError, newApiErrorS(ApiErrorRun, "can not resume a dead thread"), nil
	}
	th.Parent = ls
	ls.G.CurrentThread = th
	if !isstarted {
		cf := th.stack.Last()
		th.currentFrame = cf
		th.SetTop(0)
		for _, arg := range args {
			th.Push(arg)
		}
		cf.NArgs = int32(len(args))
		th.initCallFrame(cf)
		th.Panic = panicWithoutTraceback
	} else if !ls.resumePreempted(th, 0) { // luarun: a preempted th takes no values (preempt.go)
		for _, arg := range args {
			th.Push(arg)
		}
	}
	top := ls.GetTop()
	threadRun(th)
	haserror := LVIsFalse(ls.Get(top + 1))
	ret := dst[:0]
	if ret == nil {
		ret = make([]LValue, 0, ls.GetTop())
	}
	for idx := top + 2; idx <= ls.GetTop(); idx++ {
		ret = append(ret, ls.Get(idx))
	}
	if len(ret) == 0 {
		ret = append(ret, LNil)
	}
	ls.SetTop(top)

	if haserror {
		return ResumeError, newApiError(ApiErrorRun, ret[0]), nil
	} else if th.stack.IsEmpty() {
		return ResumeOK, nil, ret
	}
	return ResumeYield, nil, ret
}

func (ls *LState) Yield(values ...LValue) int {
	ls.SetTop(0)
	for _, lv := range values {
		ls.Push(lv)
	}
	return -1
}

func (ls *LState) XMoveTo(other *LState, n int) {
	if ls == other {
		return
	}
	top := ls.GetTop()
	n = intMin(n, top)
	for i := n; i > 0; i-- {
		other.Push(ls.Get(top - i + 1))
	}
	ls.SetTop(top - n)
}

/* }}} */

/* GopherLua original APIs {{{ */

// Set maximum memory size. This function can only be called from the main thread.
func (ls *LState) SetMx(mx int) {
	if ls.Parent != nil {
		ls.RaiseError("sub threads are not allowed to set a memory limit")
	}
	go func() {
		limit := uint64(mx * 1024 * 1024) //MB
		var s runtime.MemStats
		for atomic.LoadInt32(&ls.stop) == 0 {
			runtime.ReadMemStats(&s)
			if s.Alloc >= limit {
				fmt.Println("out of memory")
				os.Exit(3)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// SetContext set a context ctx to this LState. The provided ctx must be non-nil.
func (ls *LState) SetContext(ctx context.Context) {
	if ls.interrupt == nil {
		ls.mainLoop = mainLoopWithContext
	}
	ls.ctx = ctx
}

// Interrupt stops a running state from another goroutine at its next
// instruction, for a price of one atomic load per instruction (a context
// costs a channel poll per instruction). Flag is written by any
// goroutine; it is read before every instruction by the goroutine running
// the state, which calls Check when it is not zero: a non-nil error is
// raised there, as a done context's error is. Check may clear the bits it
// has answered. Bit InterruptHook is SetHook's: Check is called only for
// the others (and may be nil when only hooks use the interrupt).
// (luarun's fork.)
type Interrupt struct {
	Flag  atomic.Uint32
	Check func(L *LState) error

	hooks atomic.Int32 // threads with an active hook (hook.go)
}

// SetInterrupt makes ls (and the threads made from it afterwards) check
// in before every instruction; it takes the place of the context's check,
// while the context stays ls's context. nil removes it. (luarun's fork.)
func (ls *LState) SetInterrupt(in *Interrupt) {
	ls.interrupt = in
	switch {
	case in != nil:
		ls.mainLoop = mainLoopWithInterrupt
	case ls.ctx != nil:
		ls.mainLoop = mainLoopWithContext
	default:
		ls.mainLoop = mainLoop
	}
}

// Context returns the LState's context. To change the context, use WithContext.
func (ls *LState) Context() context.Context {
	return ls.ctx
}

// RemoveContext removes the context associated with this LState and returns this context.
func (ls *LState) RemoveContext() context.Context {
	oldctx := ls.ctx
	if ls.interrupt == nil {
		ls.mainLoop = mainLoop
	}
	ls.ctx = nil
	return oldctx
}

// Converts the Lua value at the given acceptable index to the chan LValue.
func (ls *LState) ToChannel(n int) chan LValue {
	if lv, ok := ls.Get(n).(LChannel); ok {
		return (chan LValue)(lv)
	}
	return nil
}

// RemoveCallerFrame removes the stack frame above the current stack frame. This is useful in tail calls. It returns
// the new current frame.
func (ls *LState) RemoveCallerFrame() *callFrame {
	cs := ls.stack
	sp := cs.Sp()
	parentFrame := cs.At(sp - 2)
	currentFrame := cs.At(sp - 1)
	parentsParentFrame := parentFrame.Parent
	*parentFrame = *currentFrame
	parentFrame.Parent = parentsParentFrame
	parentFrame.Idx = int32(sp - 2)
	cs.Pop()
	return parentFrame
}

/* }}} */

/* }}} */

//

// CallFrame is a frame of a state's call stack (luarun: exported for the
// embedder's debug library, which walks frames by their Parent links).
type CallFrame = callFrame

// CurrentFrame returns the frame ls is executing (or suspended in), or
// nil (luarun).
func (ls *LState) CurrentFrame() *CallFrame { return ls.currentFrame }

// Frame returns the frame dbg describes (luarun).
func (dbg *Debug) Frame() *CallFrame { return dbg.frame }
