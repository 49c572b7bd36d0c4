package luaproc

import (
	lua "github.com/luarun/luarun/lua"
	"strings"
	"sync"

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

func jsonConverter() *converter { return &converter{null: jsonNull, objectMT: jsonObjectMT} }

var jsonFuncs = map[string]lua.LGFunction{
	"encode": jsonEncode,
	"decode": jsonDecode,
	"object": jsonObject,
}

func jsonEncode(L *lua.LState) int {
	v, err := jsonConverter().toGo(L.CheckAny(1), "value", 0)
	if err == nil {
		var b []byte
		if b, err = payload.Encode(v); err == nil {
			L.Push(lua.LString(b))
			return 1
		}
	}
	L.Push(lua.LNil)
	L.Push(lua.LString("json.encode: " + err.Error()))
	return 2
}

func jsonDecode(L *lua.LState) int {
	v, err := payload.Decode([]byte(L.CheckString(1)))
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString("json.decode: " + strings.TrimPrefix(err.Error(), "decode JSON: ")))
		return 2
	}
	L.Push(jsonConverter().toLua(L, v))
	return 1
}

// jsonObject marks t (or a new table) to encode as an object.
func jsonObject(L *lua.LState) int {
	t := L.OptTable(1, L.CreateTable(0, 0))
	t.Metatable = jsonObjectMT
	L.Push(t)
	return 1
}
