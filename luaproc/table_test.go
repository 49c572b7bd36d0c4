package luaproc

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestTableLayout checks table.go's mirror of lua.LTable against tables
// built through gopher-lua's public API, then uses tables built through
// the mirror from the public API and from Lua.
func TestTableLayout(t *testing.T) {
	require.Equal(t, unsafe.Sizeof(lua.LTable{}), unsafe.Sizeof(tableFields{}), "lua.LTable's size")

	// gopher-lua's own table, read through the mirror
	pub := &lua.LTable{Metatable: lua.LNil}
	pub.RawSetInt(1, lua.LString("one"))
	pub.RawSetString("s", lua.LNumber(2))
	pub.RawSet(lua.LTrue, lua.LNumber(3))
	f := (*tableFields)(unsafe.Pointer(pub))
	require.Equal(t, []lua.LValue{lua.LString("one")}, f.array)
	require.Equal(t, map[string]lua.LValue{"s": lua.LNumber(2)}, f.strdict)
	require.Equal(t, map[lua.LValue]lua.LValue{lua.LTrue: lua.LNumber(3)}, f.dict)
	require.Equal(t, []lua.LValue{lua.LString("s"), lua.LTrue}, f.keys)
	require.Equal(t, map[lua.LValue]int{lua.LString("s"): 0, lua.LTrue: 1}, f.k2i)

	// a record, read and changed through the public API
	r := newRecordTable(3)
	r.set("status", integerValue(200)) // an interned key
	r.set("x-custom", lua.LString("a"))
	r.set("gone", lua.LNil)
	tb := r.t
	assert.Equal(t, lua.LNumber(200), tb.RawGetString("status"))
	assert.Equal(t, lua.LString("a"), tb.RawGetString("x-custom"))
	assert.Equal(t, lua.LNil, tb.RawGetString("gone"))
	assert.Equal(t, 0, tb.Len())
	assert.Equal(t, map[string]lua.LValue{"status": lua.LNumber(200), "x-custom": lua.LString("a")}, nextAll(tb))
	tb.RawSetString("status", lua.LNumber(404)) // no second key
	tb.RawSetString("added", lua.LTrue)
	tb.RawSetString("x-custom", lua.LNil)
	assert.Equal(t, map[string]lua.LValue{"status": lua.LNumber(404), "added": lua.LTrue}, nextAll(tb))

	// an empty record takes keys like any table
	empty := newRecordTable(0).t
	empty.RawSetString("x", lua.LTrue)
	assert.Equal(t, map[string]lua.LValue{"x": lua.LTrue}, nextAll(empty))

	// and from Lua
	L := lua.NewState()
	defer L.Close()
	r = newRecordTable(2)
	r.set("body", lua.LString("hi"))
	r.set("code", integerValue(3))
	L.SetGlobal("rec", r.t)
	require.NoError(t, L.DoString(`
		local n, seen = 0, {}
		for k, v in pairs(rec) do n = n + 1; seen[k] = v end
		assert(n == 2 and seen.body == "hi" and seen.code == 3, "pairs")
		rec.code, rec.extra = nil, 1
		n = 0
		for k in pairs(rec) do n = n + 1 end
		assert(n == 2 and rec.extra == 1 and rec.code == nil and #rec == 0, "after changes")`))
}

// nextAll walks t with Next, as pairs does, failing on a key seen twice.
func nextAll(t *lua.LTable) map[string]lua.LValue {
	out := map[string]lua.LValue{}
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		s := string(k.(lua.LString))
		if _, twice := out[s]; twice {
			panic("key " + s + " seen twice")
		}
		out[s] = v
	}
	return out
}

func TestIntegerValue(t *testing.T) {
	for _, n := range []int64{0, 1, 200, 1023, 1024, -1, 1 << 40} {
		assert.Equal(t, lua.LNumber(n), integerValue(n), "%d", n)
	}
}
