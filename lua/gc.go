package lua

// luarun: __gc finalizers of userdata, as Lua 5.1 runs them (lgc.c:
// luaC_separateudata, GCTM, lua_close's callallgcTM).
//
// Which userdata: those made by newproxy (which 5.1 programs give a __gc
// after the fact: the metatable is shared and written later), and those
// given a metatable by SetMetatable (debug.setmetatable, Go code: io's
// files, but stdin, stdout and stderr, whose __gc does nothing) that
// holds __gc at that moment. Each is registered, in creation order, in
// its state's gcSet (Global.gc, nil until the first: a program that never
// makes one pays one nil check per collection and a __gc lookup per
// SetMetatable of a userdata). A userdata Go code builds with a Metatable
// field set directly is not registered.
//
// Why our own mark: Go's collector cannot tell that a userdata is
// unreachable while keeping it for its finalizer when the userdata is
// part of a cycle (u → metatable → __gc closure → u, as 5.1 programs
// write it): runtime.SetFinalizer never runs a finalizer of an object in
// a cycle, and a weak pointer gives back nothing once the object died.
// So, at collectgarbage("collect") (and a step ending a cycle) while the
// set is not empty, and when a registration finds the set grown to twice
// what the last walk left (256 at least; autoCollect), separate walks the
// state's Lua heap from its roots (about 30 ms for 200,000 tables) —
// registry, globals, per-type metatables, the main and current threads
// and the threads that resumed the current one (their stacks up to the
// top, call frames, hooks' values), what the embedder's Go code holds
// (Global.GCRoots: luaproc's tasks), the userdata already waiting for
// their finalizers — skipping weak tables' weak parts, as 5.1's mark
// does. A registered userdata not reached is separated: when its
// metatable has a __gc it joins the pending list (newest first, as 5.1's
// tmudata), otherwise it is finalized at once (5.1 marks it so: a __gc
// added later is never run). Invariants:
//
//   - a registered userdata is held strongly (gcSet.uds) until it is
//     separated; a pending one (gcSet.pending) until its finalizer ran;
//     so its object is alive whatever Go's collector does, and the
//     finalizer gets the object itself (resurrection: it may store it).
//   - what only Go code holds and Global.GCRoots does not give (a Go
//     closure's captures, a userdata's Go Value other than an LValue, a
//     channel's buffer) is not seen by the walk: a registered userdata
//     held only there is taken for garbage (its finalizer runs early; the
//     object itself stays valid, Go's collector keeps it). So a Go
//     function that makes two finalizable userdata must put the first
//     where Lua reaches it (the stack) before it makes the second: the
//     second's registration may walk (the one being registered is never
//     taken).
//   - after separating, collectWeak clears the weak tables; a weak value
//     that is a pending userdata is removed with them (5.1's iscleared),
//     a weak key stays until the userdata really dies, the collection
//     after its finalizer ran ("finalized keys are removed in two
//     cycles").
//   - finalizers run on the collecting Lua thread, inside collectgarbage,
//     newest first; each leaves the pending list before it is called, so
//     an error (which propagates out of collectgarbage, as in 5.1) leaves
//     the others pending for the next collection. Never on Go's
//     finalizer goroutine.
//   - at close (CloseFinalizers: LState.Close, and luaproc at a
//     process's end before its state is reused) the pending ones and then
//     every registered one run, newest first, each in a protected call
//     whose error is ignored; userdata made during them are not run, and
//     the set is emptied. os.exit (whose 5.1 exits without closing the
//     state) and a killed luaproc process drop them (DropFinalizers).

import "unsafe"

// Userdata finalization states (LUserData.gc).
const (
	gcNone       = iota // not registered
	gcRegistered        // in gcSet.uds
	gcPending           // separated, its finalizer not yet run
	gcFinalized         // separated: never registered again
)

// gcSet is a state's userdata with finalizers (Global.gc).
type gcSet struct {
	uds     []*LUserData // registered, oldest first
	pending []*LUserData // separated, to be finalized, first first
	next    int          // len(uds) at which registerGC walks (autoCollect)
}

// closingGC is Global.gc while CloseFinalizers runs: empty, never
// written (registerGC registers nothing then), shared by all states.
var closingGC = &gcSet{}

// gcAutoMin is the fewest registrations between two automatic walks.
const gcAutoMin = 256

// registerGC registers ud (made by newproxy, or given a metatable with
// __gc) for finalization. When the set has grown past gcSet.next since
// the last walk, it first walks (autoCollect), as 5.1's allocation steps
// would collect: a program that makes many and never calls
// collectgarbage does not keep them all.
func (ls *LState) registerGC(ud *LUserData) {
	g := ls.G
	if ud.gc != gcNone || g.gcs() == closingGC {
		return
	}
	if g.gcs() == nil {
		g.more().gc = &gcSet{next: gcAutoMin}
	}
	if len(g.rare.gc.uds) >= g.rare.gc.next {
		autoCollect(ls)
	}
	ud.gc = gcRegistered
	g.rare.gc.uds = append(g.rare.gc.uds, ud)
}

// autoCollect separates the registered userdata that nothing reaches and
// runs the finalizers of those with a __gc, on ls (an error propagates
// out of the call that registered). ud, being registered, is not in the
// set yet: the walk cannot take it for garbage.
func autoCollect(ls *LState) {
	gs := ls.G.gcs()
	gs.separate(ls)
	gs.next = max(2*len(gs.uds), gcAutoMin)
	runPending(ls)
}

// gcMethod is ud's __gc of the moment, nil when there is none.
func gcMethod(ud *LUserData) LValue {
	mt, ok := ud.Metatable.(*LTable)
	if !ok {
		return nil
	}
	if m := mt.RawGetString("__gc"); m != LNil {
		return m
	}
	return nil
}

// isPending reports whether v is a userdata waiting for its finalizer.
func isPending(v LValue) bool {
	ud, ok := v.(*LUserData)
	return ok && ud.gc == gcPending
}

// collectFull is a full collection for L's state: separate the userdata
// to finalize, clear the weak tables, then run the finalizers.
func collectFull(L *LState) {
	gs := L.G.gcs()
	if gs == nil {
		collectWeak(L)
		return
	}
	gs.separate(L)
	gs.next = max(2*len(gs.uds), gcAutoMin)
	collectWeak(L)
	runPending(L)
}

// separate moves the registered userdata that L's roots do not reach to
// the pending list (those with a __gc) or out of the set.
func (gs *gcSet) separate(L *LState) {
	if len(gs.uds) == 0 {
		return
	}
	m := newGCMarker()
	m.markRoots(L)
	m.drain()
	kept := gs.uds[:0]
	var dead []*LUserData
	for _, ud := range gs.uds {
		if _, ok := m.seen[uintptr(unsafe.Pointer(ud))]; ok {
			kept = append(kept, ud)
		} else {
			dead = append(dead, ud)
		}
	}
	clear(gs.uds[len(kept):])
	gs.uds = kept
	for i := len(dead) - 1; i >= 0; i-- { // newest first
		gs.pend(dead[i])
	}
}

// pend makes ud pending when it has a __gc, finalized otherwise.
func (gs *gcSet) pend(ud *LUserData) {
	if gcMethod(ud) == nil {
		ud.gc = gcFinalized
		return
	}
	ud.gc = gcPending
	gs.pending = append(gs.pending, ud)
}

// runPending runs the pending finalizers on L, an error propagating.
func runPending(L *LState) {
	gs := L.G.gcs()
	for len(gs.pending) > 0 {
		ud := gs.popPending()
		if m := gcMethod(ud); m != nil {
			L.Push(m)
			L.Push(ud)
			L.Call(1, 0)
		}
	}
}

// popPending takes the first pending userdata, now finalized.
func (gs *gcSet) popPending() *LUserData {
	ud := gs.pending[0]
	n := copy(gs.pending, gs.pending[1:])
	gs.pending[n] = nil
	gs.pending = gs.pending[:n]
	ud.gc = gcFinalized
	return ud
}

// CloseFinalizers runs the finalizers of L's state as 5.1's lua_close
// does: the pending ones, then those of every registered userdata,
// newest first, errors ignored. Userdata made meanwhile are not run.
// The state keeps no finalizable userdata afterwards (a recycled state
// starts without).
func CloseFinalizers(L *LState) {
	gs := L.G.gcs()
	if gs == nil || gs == closingGC {
		return
	}
	L.G.rare.gc = closingGC
	defer func() { L.G.rare.gc = nil }()
	if L.currentFrame == nil {
		L.SetTop(0) // as lua_close resets the stack
	}
	for i := len(gs.uds) - 1; i >= 0; i-- {
		gs.pend(gs.uds[i])
	}
	gs.uds = nil
	for len(gs.pending) > 0 {
		closeCall(L, gs.popPending())
	}
}

// closeCall runs ud's finalizer at close, its error ignored (as
// lua_close's), a panic (the stack full) included.
func closeCall(L *LState, ud *LUserData) {
	m := gcMethod(ud)
	if m == nil {
		return
	}
	top := L.GetTop()
	defer func() {
		if recover() != nil {
			L.SetTop(top)
		}
	}()
	L.Push(m)
	L.Push(ud)
	_ = L.PCall(1, 0, nil)
}

// DropFinalizers forgets the finalizable userdata of L's state without
// running their finalizers (5.1's os.exit, which exits without closing
// the state; a luarun process killed).
func DropFinalizers(L *LState) {
	if L.G.rare != nil {
		L.G.rare.gc = nil
	}
}

// gcMarker is separate's walk of a state's Lua heap.
type gcMarker struct {
	seen  map[uintptr]struct{} // addresses: every object walked is held, Go's heap does not move
	stack []LValue
}

func newGCMarker() *gcMarker {
	return &gcMarker{seen: make(map[uintptr]struct{})}
}

// mark queues v when it is an object not seen yet.
func (m *gcMarker) mark(v LValue) {
	p, ok := objAddr(v)
	if !ok {
		return
	}
	if _, ok := m.seen[p]; ok {
		return
	}
	m.seen[p] = struct{}{}
	m.stack = append(m.stack, v)
}

// markTable marks tb when it is not nil (a nil *LTable is no LValue).
func (m *gcMarker) markTable(tb *LTable) {
	if tb != nil {
		m.mark(tb)
	}
}

// markRoots marks what L's state holds as 5.1's markroot does.
func (m *gcMarker) markRoots(L *LState) {
	g := L.G
	m.markTable(g.registry)
	m.markTable(g.Global)
	for _, mt := range g.builtinMts {
		m.markTable(mt)
	}
	for _, th := range []*LState{g.MainThread, g.CurrentThread} {
		if th != nil {
			m.mark(th)
		}
	}
	for th := L; th != nil; th = th.Parent {
		m.mark(th)
	}
	if g.GCRoots != nil {
		for _, v := range g.GCRoots() {
			m.mark(v)
		}
	}
	if gs := g.gcs(); gs != nil {
		for _, ud := range gs.pending {
			m.mark(ud)
		}
	}
}

// drain walks the queued objects until none is left.
func (m *gcMarker) drain() {
	for len(m.stack) > 0 {
		v := m.stack[len(m.stack)-1]
		m.stack[len(m.stack)-1] = nil
		m.stack = m.stack[:len(m.stack)-1]
		switch o := v.(type) {
		case *LTable:
			m.walkTable(o)
		case *LFunction:
			m.markTable(o.Env)
			for _, uv := range o.Upvalues {
				if uv != nil {
					m.mark(uv.Value())
				}
			}
		case *LUserData:
			m.markTable(o.Env)
			m.mark(o.Metatable)
			if lv, ok := o.Value.(LValue); ok {
				m.mark(lv)
			}
		case *LState:
			m.walkThread(o)
		}
	}
}

// walkTable marks tb's metatable and its entries but the weak ones.
func (m *gcMarker) walkTable(tb *LTable) {
	m.mark(tb.Metatable)
	if tb.isView() {
		m.markTable(tb.home.base)
	}
	wk, wv := weakMode(tb.Metatable)
	if !wv {
		for _, v := range tb.array {
			m.mark(v)
		}
	}
	for i := range tb.node {
		n := &tb.node[i]
		if n.key == nil || n.val == nil || n.val == LNil {
			continue
		}
		if !wk {
			m.mark(n.key)
		}
		if !wv {
			m.mark(n.val)
		}
	}
}

// walkThread marks a thread's environment, the resumer, the stack up to
// the top, the call frames' functions and the hook's value.
func (m *gcMarker) walkThread(ls *LState) {
	m.markTable(ls.Env)
	if ls.Parent != nil {
		m.mark(ls.Parent)
	}
	if rg := ls.reg; rg != nil {
		for _, v := range rg.array[:min(rg.top, len(rg.array))] {
			m.mark(v)
		}
	}
	if ls.hook != nil && ls.hook.Value != nil {
		m.mark(ls.hook.Value)
	}
	forFrames(ls, func(cf *callFrame) {
		if cf.Fn != nil {
			m.mark(cf.Fn)
		}
	})
}

// forFrames calls f with each of ls's call frames in use.
func forFrames(ls *LState, f func(*callFrame)) {
	switch cs := ls.stack.(type) {
	case *fixedCallFrameStack:
		for i := range cs.array[:cs.sp] {
			f(&cs.array[i])
		}
	case *autoGrowingCallFrameStack:
		for s := 0; s <= int(cs.segIdx) && s < len(cs.segments); s++ {
			seg := cs.segments[s]
			if seg == nil {
				continue
			}
			n := FramesPerSegment
			if s == int(cs.segIdx) {
				n = int(cs.segSp)
			}
			for i := range seg.array[:n] {
				f(&seg.array[i])
			}
		}
	}
}
