package luaproc

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/luarun/luarun/payload"
)

// jsonNull is json.null: the same value in every process (it has no
// fields and no metatable, so sharing it shares nothing mutable).
var jsonNull = &lua.LUserData{Value: "json.null", Metatable: lua.LNil}

// jsonModule: json.encode, json.decode, json.null, and json.object(t),
// which marks a table to encode as {} when it is empty (decode marks the
// empty objects it makes, so they round-trip).
func (p *luaProcess) jsonModule() *lua.LTable {
	objectMT := p.L.CreateTable(0, 1)
	objectMT.RawSetString("__jsontype", lua.LString("object"))
	conv := func() *converter { return &converter{null: jsonNull, objectMT: objectMT} }
	t := p.module(map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			v, err := conv().toGo(L.CheckAny(1), "value", 0)
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
		},
		"decode": func(L *lua.LState) int {
			v, err := payload.Decode([]byte(L.CheckString(1)))
			if err != nil {
				L.Push(lua.LNil)
				L.Push(lua.LString("json.decode: " + err.Error()))
				return 2
			}
			L.Push(conv().toLua(L, v))
			return 1
		},
		"object": func(L *lua.LState) int {
			t := L.OptTable(1, L.NewTable())
			t.Metatable = objectMT
			L.Push(t)
			return 1
		},
	})
	t.RawSetString("null", jsonNull)
	return t
}
