package luaproc

import (
	"strings"
	"sync"
	"unsafe"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/payload"
)

// jsonNull is json.null: one value shared by every state. Its metatable
// is locked, so setmetatable cannot change it (a userdata has nothing
// else a script could write).
var jsonNull = &lua.LUserData{Value: "json.null", Metatable: lockedMT("json.null")}

// lockedMT is a metatable with only __metatable set: getmetatable answers
// name and setmetatable refuses to replace it.
func lockedMT(name string) *lua.LTable {
	mt := &lua.LTable{Metatable: lua.LNil}
	mt.RawSetString("__metatable", lua.LString(name))
	lockedMTs.Store(mt, true)
	return mt
}

// lockedMTs holds every metatable lockedMT made (isLuarunMT).
var lockedMTs sync.Map

// jsonObjectMT marks tables that encode as objects even when empty
// (json.object, and the empty objects json.decode makes). It is shared
// and locked: getmetatable on a marked table answers "json.object".
var jsonObjectMT = lockedMT("json.object")

// jsonConverter is json's converter; each value it converts is a step
// of L's interrupt budget (a kill stops a long encode or decode).
func jsonConverter(L *lua.LState) *converter {
	return &converter{null: jsonNull, objectMT: jsonObjectMT, ticker: L}
}

var jsonFuncs = map[string]lua.LGFunction{
	"encode": jsonEncode,
	"decode": jsonDecode,
	"object": jsonObject,
}

func jsonEncode(L *lua.LState) int {
	c := jsonConverter(L)
	v, err := c.toGo(L.CheckAny(1), "value", 0)
	if err == nil {
		var b []byte
		if b, err = payload.EncodeStop(v, jsonStop(L)); err == nil {
			chargeString(L, len(b))
			L.Push(lua.LString(unsafe.String(unsafe.SliceData(b), len(b)))) // b is ours alone
			return 1
		}
	}
	L.Push(lua.LNil)
	L.Push(lua.LString("json.encode: " + err.Error()))
	return 2
}

func jsonDecode(L *lua.LState) int {
	s := L.CheckString(1)
	// the text is read in place: DecodeStop neither writes it nor keeps it
	text := unsafe.Slice(unsafe.StringData(s), len(s))
	v, err := payload.DecodeStop(text, jsonStop(L))
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString("json.decode: " + strings.TrimPrefix(err.Error(), "decode JSON: ")))
		return 2
	}
	L.Push(jsonConverter(L).toLua(L, v))
	return 1
}

// jsonStop is the stop hook of L's JSON encoding and decoding, which run
// on L's goroutine: it checks L's interrupt, as the VM does between two
// instructions, and raises its error there (a kill, a step limit, a
// shutdown), so that a long encode or decode stops within a millisecond
// or so of work (payload.DecodeStop).
func jsonStop(L *lua.LState) func() error {
	return func() error {
		L.CheckInterrupt()
		return nil
	}
}

// jsonObject marks t (or a new table) to encode as an object.
func jsonObject(L *lua.LState) int {
	t := L.OptTable(1, L.CreateTable(0, 0))
	t.Metatable = jsonObjectMT
	L.Push(t)
	return 1
}
