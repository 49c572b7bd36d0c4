package lua

// luarun: copy-on-write views of shared tables.
//
// An embedder that runs many states from one set of libraries (luarun
// runs a state per process) wants each state to see its own _G, string,
// table... — ordinary tables that rawget, pairs, next and setmetatable
// treat as Lua 5.1 does, and that a script may change without any other
// state seeing it — without copying every library into every state.
//
// A shared table is filled once, then marked with Share and never
// written again; many states read it at once (it is frozen: reads write
// nothing). A view is a state's own table whose misses fall through to a
// shared base:
//
//   - a read (RawGet*) looks in the view's own part first, then in the
//     base. A value read from the base that is itself a shared table is
//     replaced by this state's view of it (ViewSet.View), which the read
//     also stores in the view's own part: a script never holds a shared
//     table, and _G.string, package.loaded.string and getmetatable("").
//     __index are one table in a state;
//   - writing a non-nil value writes the own part, which shadows the
//     base;
//   - removing a key (writing nil), traversing (Next, ForEach), and the
//     length and array operations first materialize the view: the base's
//     entries that the own part lacks are copied in (shared tables mapped
//     to views), and the view forgets its base — from then on it is an
//     ordinary table. Scripts seldom do these to library tables, so most
//     states never copy anything.
//
// Invariants: a view's base is shared and never written; a shared table
// is never a value in a state's registers (reads map it) nor a state's
// own metatable (views map their base's metatable); ViewSet.View returns
// one view per shared table and state. Views belong to one state and are
// used by one goroutine at a time, as any table of a state is.

import (
	"math"
	"sort"
)

// tableHome ties a table to its state (LTable.home): g is the state whose
// memory the table's growth charges (memory.go). A view's home (flagView
// set) also ties it to its base and to its state's ViewSet; an ordinary
// table's is its state's Global.home, with no base.
type tableHome struct {
	g    *Global  // the state; nil: the table's growth charges nothing
	base *LTable  // a view's: shared, never written
	set  *ViewSet // a view's: the state's views, where views of the base's tables are found
}

// flagView marks a table whose home is its view link (LTable.flags; the
// lastfree bits below it need maxBits+1 bits).
const flagView = 1 << 28

// isView reports whether tb is a copy-on-write view (flagView).
func (tb *LTable) isView() bool { return tb.flags&flagView != 0 }

// viewLink makes tb a view through link, a link of s.
func (s *ViewSet) viewLink(tb *LTable, link *tableHome, shared *LTable) {
	*link = tableHome{g: s.g, base: shared, set: s}
	tb.home = link
	tb.flags |= flagView
}

// viewTable is a view and its link, made in one allocation.
type viewTable struct {
	LTable
	link tableHome
}

type viewPair struct {
	shared, view *LTable
}

// ViewMaker lets an embedder supply a state's value for some shared
// tables (a per-state table it makes itself, for example) instead of a
// view. ViewFor returns nil to have an ordinary view made.
type ViewMaker interface {
	ViewFor(set *ViewSet, shared *LTable) *LTable
}

// ViewSet is a state's views of shared tables (Global.Views).
type ViewSet struct {
	// Maker, if set, is asked first for each shared table this state
	// needs a view of (luarun: the process the state runs).
	Maker ViewMaker

	// The views and their links: the globals' (Bind) and the first made
	// have theirs here, made with the state; most states make no other.
	rootLink  tableHome  // g.Global's
	firstLink tableHome  // firstView's
	firstView *LTable    //
	views     []viewPair // the others: one per library the state touched
	g         *Global    // the state whose globals and type metatables are views
}

// Share freezes tb and marks it shared: from now on it must not be
// written, and reads through a view of a table holding it yield a view of
// it instead.
func (tb *LTable) Share() {
	if tb.IsShared() {
		return // others may be reading it: its nodes must not move
	}
	tb.spreadNodes()
	tb.shareKeys() // intern.go
	tb.Freeze()
	tb.flags |= flagShared
}

// spreadNodes lays tb's hash part out again for reading only, before
// Share: twice as many nodes as keys or more (most keys then sit in their
// main position, and a miss mostly ends at its first node), the keys
// placed in a fixed order (strings sorted first), so that the chains —
// and the cost of a lookup — do not depend on the order in which the
// table was filled (Go map order, for the libraries' SetFuncs).
func (tb *LTable) spreadNodes() {
	type entry struct{ k, v LValue }
	var entries []entry
	for i := range tb.node {
		if n := &tb.node[i]; n.val != LNil && n.val != nil {
			entries = append(entries, entry{n.key, n.val})
		}
	}
	if len(entries) == 0 {
		return
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, aStr := entries[i].k.(LString)
		b, bStr := entries[j].k.(LString)
		return aStr && (!bStr || a < b)
	})
	tb.setNodeVector(2 * len(entries))
	for _, e := range entries {
		tb.setKey(e.k, e.v)
	}
}

// ShareAs is Share for a table that stands in for alias, another shared
// table: a state whose globals are a view of tb (Bind) takes alias for
// its globals too. (luarun: a script's own globals, its function
// templates over the runtime's globals, stand in for the runtime's
// globals, which package.loaded._G names; definitions.go.)
func (tb *LTable) ShareAs(alias *LTable) {
	tb.Share()
	tb.home = &tableHome{base: alias}
}

// IsShared reports whether Share marked tb.
func (tb *LTable) IsShared() bool { return tb.flags&flagShared != 0 }

// Base returns the shared table tb is a view of, or nil when tb is not
// (or no longer) a view.
func (tb *LTable) Base() *LTable {
	if !tb.isView() {
		return nil
	}
	return tb.home.base
}

// RawGetStringShared is RawGetString for an embedder's own reads: a
// shared table read through a view is answered as it is, unless the
// state has a view of it already, and no view is made. The caller must
// only read what it gets (luarun's require reads package.loaders so,
// without making the process a copy it never asked for).
func (tb *LTable) RawGetStringShared(key string) LValue {
	if !tb.isView() {
		return tb.RawGetString(key)
	}
	link := tb.home
	tb.flags &^= flagView
	v := tb.RawGetString(key)
	tb.flags |= flagView
	if v != LNil {
		return v
	}
	v = link.base.RawGetString(key)
	switch t := v.(type) {
	case *LTable:
		if t.IsShared() {
			if view := link.set.Lookup(t); view != nil {
				return view
			}
		}
	case *LFunction:
		if t.isTemplate() { // never handed out: this state's own closure
			return tb.cowGetStringH(key, strHash(key))
		}
	}
	return v
}

// Bind makes the state's globals table (Global.Global) its view of
// shared: the globals' own entries shadow shared's.
func (s *ViewSet) Bind(shared *LTable) {
	s.viewLink(s.g.Global, &s.rootLink, shared)
}

// Root is the shared table the globals are a view of (Bind's), or nil.
func (s *ViewSet) Root() *LTable { return s.rootLink.base }

// Reset forgets every view (a state reused for a new program).
func (s *ViewSet) Reset() {
	clear(s.views)
	s.views = s.views[:0]
	s.Maker, s.rootLink, s.firstLink, s.firstView = nil, tableHome{}, tableHome{}, nil
}

// Lookup returns this state's view of shared, or nil if it has none yet.
func (s *ViewSet) Lookup(shared *LTable) *LTable {
	switch shared {
	case nil:
		return nil
	case s.rootLink.base:
		return s.g.Global
	case s.firstLink.base:
		return s.firstView
	}
	if root := s.rootLink.base; root != nil && root.home != nil && root.home.base == shared {
		return s.g.Global // root stands in for shared (ShareAs)
	}
	for _, p := range s.views {
		if p.shared == shared {
			return p.view
		}
	}
	return nil
}

// View returns this state's view of shared, made on first use.
func (s *ViewSet) View(shared *LTable) *LTable {
	if v := s.Lookup(shared); v != nil {
		return v
	}
	if s.Maker != nil {
		if v := s.Maker.ViewFor(s, shared); v != nil {
			s.views = append(s.views, viewPair{shared, v})
			return v
		}
	}
	var v *LTable
	if s.firstView == nil {
		v = &LTable{}
		s.viewLink(v, &s.firstLink, shared)
		s.firstView = v
	} else {
		vt := &viewTable{}
		v = &vt.LTable
		s.viewLink(v, &vt.link, shared)
		s.views = append(s.views, viewPair{shared, v})
	}
	v.Metatable = s.mapped(shared.Metatable)
	s.followTypeMetatables(shared)
	return v
}

// Unchanged reports whether reading is all the state did to its views
// and type metatables since Reset: each view is still a view of its base
// (one the Maker supplied is not: it is of another table, or none), with
// the metatable its base's maps to and in its own part only what reads
// cached there (for each key the state's own value for the base's: its
// view of a shared table, or its closure of a function template, with
// the globals as environment); and no type metatable is set but
// strings', which is stringMT or the state's view of it. A state so left
// shows a new program of the same globals exactly what new views would
// (luarun: a recycled state keeps them, saving their allocations and
// first reads).
func (s *ViewSet) Unchanged(stringMT *LTable) bool {
	if s.g == nil || !s.typeMetatablesUnchanged(stringMT) {
		return false
	}
	if !s.viewUnchanged(s.g.Global, s.rootLink.base) {
		return false
	}
	if s.firstView != nil && !s.viewUnchanged(s.firstView, s.firstLink.base) {
		return false
	}
	for _, p := range s.views {
		if !s.viewUnchanged(p.view, p.shared) {
			return false
		}
	}
	return true
}

// typeMetatablesUnchanged is Unchanged's test of the type metatables.
func (s *ViewSet) typeMetatablesUnchanged(stringMT *LTable) bool {
	for i, t := range s.g.builtinMts {
		if i == int(LTString) && stringMT != nil {
			if t == nil || t != stringMT && t != s.Lookup(stringMT) {
				return false // removed (debug.setmetatable("", nil)) or replaced
			}
		} else if t != nil {
			return false
		}
	}
	return true
}

// viewUnchanged is Unchanged's test of view v of base.
func (s *ViewSet) viewUnchanged(v, base *LTable) bool {
	if base == nil || !v.isView() || v.home.base != base || !s.holdsOwn(base.Metatable, v.Metatable) {
		return false
	}
	for i, val := range v.array {
		if val != LNil && !s.holdsOwn(base.RawGetInt(i+1), val) {
			return false
		}
	}
	for i := range v.node {
		n := &v.node[i]
		if n.val != nil && n.val != LNil && !s.holdsOwn(base.RawGet(n.key), n.val) {
			return false
		}
	}
	return true
}

// holdsOwn reports whether own is what a read of v, a base's value, puts
// in a view: the state's own value for v, or v itself.
func (s *ViewSet) holdsOwn(v, own LValue) bool {
	switch t := v.(type) {
	case *LTable:
		if t.IsShared() {
			view := s.Lookup(t)
			return view != nil && own == LValue(view)
		}
	case *LFunction:
		if t.isTemplate() {
			f, ok := own.(*LFunction)
			return ok && !f.IsG && f.Proto == t.Proto && f.Env == s.g.Global && len(f.Upvalues) == 0
		}
	}
	if n, ok := v.(LNumber); ok { // 0 == -0, but 1/x tells them apart
		m, ok := own.(LNumber)
		return ok && math.Float64bits(float64(n)) == math.Float64bits(float64(m))
	}
	return own == v
}

// mapped returns v, or this state's own value for it: its view of a
// shared table, its closure of a function template (definitions.go).
func (s *ViewSet) mapped(v LValue) LValue {
	if mapsToOwn(v) {
		return s.own(v)
	}
	return v
}

// mapsToOwn reports whether a state must not hold v but its own value
// for it (small, to be inlined: a library function read through a view
// takes this test on every call).
func mapsToOwn(v LValue) bool {
	switch t := v.(type) {
	case *LTable:
		return t.IsShared()
	case *LFunction:
		return t.isTemplate()
	}
	return false
}

// own is this state's own value for v, which mapsToOwn.
func (s *ViewSet) own(v LValue) LValue {
	if t, ok := v.(*LTable); ok {
		return s.View(t)
	}
	return newLFunctionL(v.(*LFunction).Proto, s.g.Global, 0)
}

// followTypeMetatables switches a shared type metatable (strings') whose
// __index is shared to this state's view of it, once the state has a view
// of that __index: what a script adds to its string table is then a
// method of its strings, as in Lua 5.1 (getmetatable("").__index ==
// string). Until then the state reads the shared metatable directly.
func (s *ViewSet) followTypeMetatables(shared *LTable) {
	if s.g == nil {
		return
	}
	for i, t := range s.g.builtinMts {
		if t != nil && t.IsShared() && t.RawGetString("__index") == LValue(shared) {
			s.g.builtinMts[i] = s.View(t)
		}
	}
}

// cowGet is a read that missed tb's own part: the base's value, mapped
// to this state's own (a shared table to its view, a function template
// to its closure), which is then kept in the own part, where a non-nil
// write goes anyway.
func (tb *LTable) cowGet(key LValue) LValue {
	v := tb.home.base.RawGet(key)
	if mapsToOwn(v) {
		own := tb.home.set.own(v)
		tb.RawSet(key, own)
		return own
	}
	return v
}

// cowGetStringH is cowGet of a string key (not boxed: no allocation)
// whose strHash is h. The base is searched with the hash the caller had
// (a constant's, which the compiler hashed, or the one the view's own
// part was searched with), not hashed again: a library function read
// through a view (process.send) misses the view on every call, as only
// tables are copied into it.
func (tb *LTable) cowGetStringH(key string, h uint32) LValue {
	v := tb.home.base.rawGetStringH(key, h)
	if mapsToOwn(v) {
		own := tb.home.set.own(v)
		tb.RawSetString(key, own)
		return own
	}
	return v
}

// sharedWrite panics: a shared table is read by many states at once.
func sharedWrite() {
	panic("lua: a shared table was written (luarun: tables marked by Share are read-only)")
}

// materialize copies into tb the base's entries its own part lacks and
// makes tb an ordinary table.
func (tb *LTable) materialize() {
	if !tb.isView() {
		return
	}
	link := tb.home
	tb.flags &^= flagView
	tb.home = link.g.tableHome() // the state's own: the base is let go
	link.base.ForEach(func(k, v LValue) {
		if tb.RawGet(k) == LNil {
			tb.RawSet(k, link.set.mapped(v))
		}
	})
}
