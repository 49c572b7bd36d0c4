package lualib

// collectgarbage with Lua 5.1's options. gopher-lua's ran a Go collection
// whatever it was asked and returned nothing, so collectgarbage("count")
// was nil. There is one Go heap for the whole runtime: "count" is that
// heap's size (every process's objects, and luarun's own), "collect" and
// "step" collect it (the calling process waits), and the collector's
// tuning options are accepted and remembered but change nothing.

import (
	"runtime"
	"runtime/metrics"

	lua "github.com/luarun/luarun/lua"
)

// gcTuningKey is the registry field holding a state's setpause and
// setstepmul values (5.1's defaults: 200 and 200).
const gcTuningKey = "luarun.gc-tuning"

func baseCollectGarbage(L *lua.LState) int {
	opt := L.OptString(1, "collect")
	switch opt {
	case "collect":
		runtime.GC()
		L.Push(lua.LNumber(0))
	case "count":
		L.Push(lua.LNumber(float64(heapBytes()) / 1024))
	case "step":
		runtime.GC()
		L.Push(lua.LTrue) // the step finished a cycle
	case "stop", "restart":
		L.Push(lua.LNumber(0))
	case "setpause", "setstepmul":
		t := gcTuning(L)
		old := t.RawGetString(opt)
		t.RawSetString(opt, lua.LNumber(L.OptInt(2, 0)))
		L.Push(old)
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// baseGcinfo is 5.1's gcinfo(): the count in whole kilobytes
// (lua_getgccount), what collectgarbage("count") says, truncated.
func baseGcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(heapBytes() / 1024))
	return 1
}

// heapBytes is the size of the Go heap's objects, garbage not yet swept
// included (as Lua's count includes garbage not yet collected).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcTuning is L's table of setpause and setstepmul values.
func gcTuning(L *lua.LState) *lua.LTable {
	if t, ok := L.G.Registry.RawGetString(gcTuningKey).(*lua.LTable); ok {
		return t
	}
	t := L.CreateTable(0, 2)
	t.RawSetString("setpause", lua.LNumber(200))
	t.RawSetString("setstepmul", lua.LNumber(200))
	L.G.Registry.RawSetString(gcTuningKey, t)
	return t
}
