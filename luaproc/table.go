package luaproc

// Building string-keyed Lua tables without gopher-lua's per-key garbage.
//
// lua.LTable.RawSetString boxes its key into an LValue twice (once for the
// key list that next() walks, once for the key→index map beside it) and
// grows both from empty, so a three-key table costs a dozen allocations
// before its values. Every command result that is a record (an HTTP
// response and its headers, an exec result) is such a table, built fresh
// on every call: in the http benchmark that was a fifth of what luarun
// allocated per request.
//
// A recordTable is a fresh table built through a mirror of lua.LTable's
// fields (gopher-lua v1.1.2, value.go) with all three structures sized
// once, and each key boxed once, or not at all for the keys in
// internedKeys. It keeps gopher-lua's invariant: every key of strdict is
// in keys, at the index k2i gives it. TestTableLayout checks the mirror
// against the public API, so an upgrade that moves a field fails the
// tests instead of corrupting tables.

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/luarun/luarun/commands"
)

// tableFields mirrors lua.LTable.
type tableFields struct {
	Metatable lua.LValue
	array     []lua.LValue
	dict      map[lua.LValue]lua.LValue
	strdict   map[string]lua.LValue
	keys      []lua.LValue
	k2i       map[lua.LValue]int
}

// A gopher-lua whose LTable has another size does not compile (the index
// is out of range, or the difference overflows); TestTableLayout checks
// the fields themselves.
var _ = [1]struct{}{}[unsafe.Sizeof(lua.LTable{})-unsafe.Sizeof(tableFields{})]

// recordTable is a table under construction, for n distinct string keys.
type recordTable struct {
	t *lua.LTable
	f *tableFields
}

// newRecordTable starts a table for n distinct string keys; for n = 0 it
// is an empty table like any other (set must not be called on it).
func newRecordTable(n int) recordTable {
	t := &lua.LTable{Metatable: lua.LNil}
	f := (*tableFields)(unsafe.Pointer(t))
	if n == 0 {
		return recordTable{t, f}
	}
	f.strdict = make(map[string]lua.LValue, n)
	f.keys = make([]lua.LValue, 0, n)
	f.k2i = make(map[lua.LValue]int, n)
	return recordTable{t, f}
}

// set sets t[key] = v, for a key not set before; a nil v is left out, as
// RawSetString would.
func (r recordTable) set(key string, v lua.LValue) {
	if v == lua.LNil {
		return
	}
	boxed, ok := internedKeys[key]
	if !ok {
		boxed = lua.LString(key)
	}
	r.f.strdict[key] = v
	r.f.k2i[boxed] = len(r.f.keys)
	r.f.keys = append(r.f.keys, boxed)
}

// presize gives an empty table's string part room for n keys, if it has
// none yet: its first RawSetString then does not make gopher-lua's
// default of 32 slots, over a kilobyte, for a table that holds a few.
func presize(t *lua.LTable, n int) {
	f := (*tableFields)(unsafe.Pointer(t))
	if f.strdict != nil || f.keys != nil {
		return
	}
	f.strdict = make(map[string]lua.LValue, n)
	f.keys = make([]lua.LValue, 0, n)
	f.k2i = make(map[lua.LValue]int, n)
}

// internedKeys are boxed once for all tables: the keys of the built-in
// commands' results.
var internedKeys = func() map[string]lua.LValue {
	m := map[string]lua.LValue{}
	for _, k := range commands.ResultKeys() {
		m[k] = lua.LString(k)
	}
	return m
}()

// smallNumbers are the LValues of the integers 0..1023, boxed once (an
// LNumber is a float64, which Go boxes on the heap): status codes, exit
// codes, counts.
var smallNumbers = func() (ns [1024]lua.LValue) {
	for i := range ns {
		ns[i] = lua.LNumber(i)
	}
	return ns
}()

// integerValue is lua.LNumber(n) as an LValue, shared for small n.
func integerValue(n int64) lua.LValue {
	if n >= 0 && n < int64(len(smallNumbers)) {
		return smallNumbers[n]
	}
	return lua.LNumber(n)
}
