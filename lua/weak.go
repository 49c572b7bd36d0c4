package lua

// luarun: weak tables (Lua 5.1 manual §2.10.2). A table whose metatable's
// __mode holds 'k' has weak keys, 'v' weak values; at a full collection an
// entry whose weak key or weak value is a collectable object (a table, a
// function, a userdata, a thread) that nothing else reaches is removed.
// Strings, numbers and booleans are never removed, and, as in 5.1 (no
// ephemerons), a value that refers to its weak key keeps it.
//
// How (the Go collector is the only one that knows what is reachable):
//
//   - SetMetatable registers a table in its state's weakSet (Global.weak)
//     when the metatable has a __mode string; the table keeps flagWeak
//     from then on and stays registered while it lives (the set holds it
//     by a weak.Pointer: registering keeps nothing alive). A program that
//     never gives a table such a metatable pays SetMetatable's lookup of
//     __mode and nothing else: Global.weak stays nil.
//   - A metatable that gains __mode after the tables using it were given
//     it (or whose __mode is removed or changed) is seen at the next
//     collection for the registered tables only: the mode is read there,
//     from each registered table's metatable of the moment, as 5.1 reads
//     it at each collection. A table first given a metatable without
//     __mode is not registered, so __mode added to that metatable later
//     is not seen (newKey marks nothing: the cost would fall on every
//     table).
//   - collectWeak (collectgarbage("collect"), and a step that ends a
//     cycle) first drops what the interpreter holds that 5.1 would not
//     see as roots (value-stack slots above each running thread's top,
//     call frames above its frame stack's top); then, for every live
//     registered table with a weak mode, it moves each collectable weak
//     key or value into a weak.Pointer and clears the slot (a key's slot
//     gets deadKey, so that the node stays in its chain and is not taken
//     for a free one); then runtime.GC(); then it puts back what survived
//     and removes the entries of what did not: an array slot becomes
//     LNil, a node keeps its place with value LNil (a removed entry, as
//     table.go removes: a next traversal in progress goes on) and, when
//     its key died, deadKey as its key (no Lua key equals it, and a
//     traversal cannot be at it: the key it would pass to next is alive).
//     The state runs no Lua code between the two steps, and its tables
//     are its own (another process's collection at the same time clears
//     only that process's tables; runtime.GC is safe to call from many
//     goroutines), so nothing sees the cleared slots.
//   - A node whose collectable key is removed (t[o] = nil, in any table)
//     is killed at once (tnode.kill): its key becomes deadKey, the low 32
//     bits of o's address its hash, so that the node does not keep o
//     alive (5.1 does not mark a removed entry's key: bump.lua's cells
//     die so) and a next(t, o) traversal in progress still finds its
//     place (findDead, as 5.1's findindex matches a dead key by its
//     address). Only a chain's dead keys are compared, and only when o
//     is not in the table. Set again, o takes its dead node back
//     (findObj), as in 5.1, where the key is still there until a
//     collection: removing and adding the same keys does not fill the
//     hash part with dead nodes. A weak table's entries removed by a
//     collection are killed so too.
//   - Between explicit collections entries are never removed: Go's own
//     collections see the weak entries as strong references.

import (
	"runtime"
	"strings"
	"unsafe"
	"weak"
)

// flagWeak marks a table registered in its state's weakSet.
const flagWeak = 1 << 29

// deadKey is the key of a node whose key died (removed, or collected from
// a weak table): a userdata that no Lua code can reach, so that no lookup
// finds it. deadUD is the same pointer, for isDead's cheaper comparison.
var (
	deadUD          = &LUserData{}
	deadKey  LValue = deadUD
	modeHash        = strHash("__mode")
)

// isDead reports whether k is deadKey.
func isDead(k LValue) bool {
	u, ok := k.(*LUserData)
	return ok && u == deadUD
}

// mayBeWeak reports whether mt may have a __mode (SetMetatable's check:
// the cost to a program without weak tables, a hash-part lookup).
func mayBeWeak(mt *LTable) bool {
	return mt.isView() || len(mt.node) != 0 && mt.findStrH("__mode", modeHash) >= 0
}

// weakSet is a state's registered weak tables (Global.weak).
type weakSet struct {
	tables []weak.Pointer[LTable]
	// slots and groups are collectWeak's, kept between collections so
	// that one does not allocate them again (emptied after each).
	slots  []weakSlot
	groups []weakGroup
}

// weakSlot is a slot of a weak table cleared for a collection.
type weakSlot struct {
	ref  weakRef
	at   int32 // the array part's index, or the node's
	what uint8 // slotArray, slotKey, slotVal
}

const (
	slotArray = iota
	slotKey
	slotVal
)

// weakGroup is the slots (slots[from:to]) cleared in the table
// tables[table].
type weakGroup struct {
	table    int
	from, to int
}

// weakRef is a collectable value held by a weak pointer to its object.
type weakRef struct {
	p    weak.Pointer[byte]
	kind LValueType
}

// makeWeakRef returns a weak reference to v and true when v is a
// collectable object.
func makeWeakRef(v LValue) (weakRef, bool) {
	var p unsafe.Pointer
	switch o := v.(type) {
	case *LTable:
		p = unsafe.Pointer(o)
	case *LFunction:
		p = unsafe.Pointer(o)
	case *LUserData:
		if o == deadUD {
			return weakRef{}, false
		}
		p = unsafe.Pointer(o)
	case *LState:
		p = unsafe.Pointer(o)
	default:
		return weakRef{}, false
	}
	return weakRef{weak.Make((*byte)(p)), v.Type()}, true
}

// value is the referenced object, or nil when it was collected.
func (r weakRef) value() LValue {
	p := unsafe.Pointer(r.p.Value())
	if p == nil {
		return nil
	}
	switch r.kind {
	case LTTable:
		return (*LTable)(p)
	case LTFunction:
		return (*LFunction)(p)
	case LTUserData:
		return (*LUserData)(p)
	default:
		return (*LState)(p)
	}
}

// weakMode reads mt's __mode: whether keys, values are weak.
func weakMode(mt LValue) (keys, values bool) {
	m, ok := mt.(*LTable)
	if !ok {
		return false, false
	}
	s, ok := m.RawGetString("__mode").(LString)
	if !ok {
		return false, false
	}
	return strings.IndexByte(string(s), 'k') >= 0, strings.IndexByte(string(s), 'v') >= 0
}

// noteMetatable registers tb, just given the metatable mt, when mt makes
// it weak (SetMetatable, when tb is not registered and mayBeWeak(mt)).
func (g *Global) noteMetatable(tb *LTable, mt *LTable) {
	if k, v := weakMode(mt); !k && !v {
		return
	}
	ws := g.more()
	if ws.weak == nil {
		ws.weak = &weakSet{}
	}
	tb.flags |= flagWeak
	ws.weak.tables = append(ws.weak.tables, weak.Make(tb))
}

// collectWeak is a full collection for L's state: the Go collector's,
// with the state's weak tables cleared of what it collected.
func collectWeak(L *LState) {
	ws := L.G.weaks()
	if ws == nil {
		runtime.GC()
		return
	}
	dropStaleRoots(L)
	ws.detach()
	runtime.GC()
	ws.restore()
}

// dropStaleRoots clears what L's state holds that 5.1 would not mark:
// the value stack above the top and the call frames above the current
// one, of L, the threads that resumed it, and the main thread (the Go
// code of each is stopped in a call, with nothing it still needs there).
func dropStaleRoots(L *LState) {
	for th := L; th != nil; th = th.Parent {
		th.dropStale()
	}
	if m := L.G.MainThread; m != nil {
		m.dropStale()
	}
}

// dropStale is dropStaleRoots for one thread.
func (ls *LState) dropStale() {
	if rg := ls.reg; rg != nil && rg.top < len(rg.array) {
		clear(rg.array[rg.top:])
	}
	switch cs := ls.stack.(type) {
	case *fixedCallFrameStack:
		clear(cs.array[cs.sp:])
	case *autoGrowingCallFrameStack:
		if int(cs.segIdx) < len(cs.segments) && cs.segments[cs.segIdx] != nil {
			clear(cs.segments[cs.segIdx].array[cs.segSp:])
		}
	}
}

// detach clears the weak slots of the live registered tables into
// ws.slots, grouped by table, and forgets the tables collected.
func (ws *weakSet) detach() {
	live := ws.tables[:0]
	for _, wp := range ws.tables {
		tb := wp.Value()
		if tb == nil {
			continue
		}
		live = append(live, wp)
		if wk, wv := weakMode(tb.Metatable); wk || wv {
			from := len(ws.slots)
			tb.detachSlots(ws, wk, wv)
			if len(ws.slots) > from {
				ws.groups = append(ws.groups, weakGroup{len(live) - 1, from, len(ws.slots)})
			}
		}
	}
	clear(ws.tables[len(live):])
	ws.tables = live
}

// detachSlots is detach of one table whose keys (wk) or values (wv) are
// weak. A removed node's collectable key is killed whatever the mode.
func (tb *LTable) detachSlots(ws *weakSet, wk, wv bool) {
	if wv {
		for i, v := range tb.array {
			if r, ok := makeWeakRef(v); ok {
				ws.slots = append(ws.slots, weakSlot{r, int32(i), slotArray})
				tb.array[i] = LNil
			}
		}
	}
	for i := range tb.node {
		n := &tb.node[i]
		if n.key == nil {
			continue
		}
		if n.val == nil || n.val == LNil {
			n.kill() // removed: its key must not live on here
			continue
		}
		if wk {
			if r, ok := makeWeakRef(n.key); ok {
				ws.slots = append(ws.slots, weakSlot{r, int32(i), slotKey})
				n.key = deadKey
			}
		}
		if wv {
			if r, ok := makeWeakRef(n.val); ok {
				ws.slots = append(ws.slots, weakSlot{r, int32(i), slotVal})
				n.val = LNil
			}
		}
	}
}

// objAddr is the address of a collectable object's value.
func objAddr(v LValue) (uintptr, bool) {
	switch v.(type) {
	case *LTable, *LFunction, *LUserData, *LState:
		return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]), true
	}
	return 0, false
}

// kill makes a removed node's collectable key dead: deadKey, with the low
// 32 bits of the object's address as its hash (findDead).
func (n *tnode) kill() {
	if p, ok := objAddr(n.key); ok && !isDead(n.key) {
		n.key, n.hash = deadKey, uint32(p)
	}
}

// findDead returns the dead node of a collectable key removed from tb
// (next's key, when the traversal removed it), -1 if there is none.
func (tb *LTable) findDead(key LValue) int {
	p, ok := objAddr(key)
	if !ok || len(tb.node) == 0 {
		return -1
	}
	for i := tb.keyPos(key); ; i = int(tb.node[i].next) - 1 {
		n := &tb.node[i]
		if n.hash == uint32(p) && isDead(n.key) {
			return i
		}
		if n.next == 0 {
			return -1
		}
	}
}

// findObj is findKey of a key that is neither a string, a number nor a
// boolean, and also returns its dead node (findDead), -1 for none.
func (tb *LTable) findObj(key LValue) (live, dead int) {
	if len(tb.node) == 0 {
		return -1, -1
	}
	p, _ := objAddr(key)
	dead = -1
	for i := tb.keyPos(key); ; i = int(tb.node[i].next) - 1 {
		n := &tb.node[i]
		if n.key == key {
			return i, -1
		}
		if n.hash == uint32(p) && dead < 0 && isDead(n.key) {
			dead = i
		}
		if n.next == 0 {
			return -1, dead
		}
	}
}

// restore puts back the slots whose objects survived the collection and
// removes the entries of the others.
func (ws *weakSet) restore() {
	for _, g := range ws.groups {
		if tb := ws.tables[g.table].Value(); tb != nil {
			tb.restoreSlots(ws.slots[g.from:g.to])
		}
	}
	clear(ws.slots)
	ws.slots = ws.slots[:0]
	ws.groups = ws.groups[:0]
}

// restoreSlots is restore of one table. A node's key comes before its
// value in slots.
func (tb *LTable) restoreSlots(slots []weakSlot) {
	for _, s := range slots {
		v := s.ref.value()
		switch s.what {
		case slotArray:
			if v != nil && !isPending(v) {
				tb.array[s.at] = v
			} else {
				tb.border = -1
			}
		case slotKey:
			n := &tb.node[s.at]
			if v != nil {
				n.key = v
			} else {
				n.val, n.hash = LNil, 0 // n.key stays deadKey
			}
		case slotVal:
			n := &tb.node[s.at]
			if v != nil && !isDead(n.key) && !isPending(v) {
				n.val = v
			} else {
				n.kill()
			}
		}
	}
}
