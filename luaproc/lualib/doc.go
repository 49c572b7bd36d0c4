// Package lualib is luarun's own Lua 5.1 library functions where
// gopher-lua's are slow or differ from Lua 5.1: pure functions over Lua
// values, with no knowledge of processes.
//
// Install replaces them in a state's string and table libraries:
// string.find, match, gmatch, gsub, format, upper, lower; table.concat;
// math.random and math.randomseed (a generator per state); and the base
// function gcinfo.
package lualib

import lua "github.com/luarun/luarun/lua"

// Install puts luarun's library functions in L's string and table
// library tables (which must be open).
func Install(L *lua.LState) {
	str := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	for name, fn := range map[string]lua.LGFunction{
		"find":   strFind,
		"match":  strMatch,
		"gmatch": strGmatch,
		"gsub":   strGsub,
		"format": strFormat,
		"upper":  strUpper,
		"lower":  strLower,
	} {
		str.RawSetString(name, L.NewFunction(fn))
	}
	str.RawSetString("gfind", str.RawGetString("gmatch")) // 5.1's old name (LUA_COMPAT_GFIND)
	tab := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	tab.RawSetString("concat", L.NewFunction(tabConcat))
	m := L.GetGlobal(lua.MathLibName).(*lua.LTable)
	m.RawSetString("random", L.NewFunction(mathRandom))
	m.RawSetString("randomseed", L.NewFunction(mathRandomseed))
	L.SetGlobal("gcinfo", L.NewFunction(baseGcinfo)) // 5.1's, missing from gopher-lua
}
