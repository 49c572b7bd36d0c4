package lualib

// gcinfo, 5.1's, missing from gopher-lua's base library. collectgarbage
// is the lua package's (5.1's options there; this package replaced it
// when gopher-lua's answered nothing).

import (
	lua "github.com/luarun/luarun/lua"
)

// baseGcinfo is 5.1's gcinfo(): the count in whole kilobytes
// (lua_getgccount), what collectgarbage("count") says, truncated.
func baseGcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(lua.MemoryInUse(L, false) / 1024))
	return 1
}
