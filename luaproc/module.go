package luaproc

// module and package.seeall, as Lua 5.1 has them (loadlib.c's ll_module),
// within the sandbox rules: module sets the environment of the Lua
// function that called it, never that of a luarun built-in (whose
// environment is the template's, shared by every process), and seeall
// never writes into one of luarun's shared metatables.

import (
	"strings"

	lua "github.com/luarun/luarun/lua"
)

// module is module(name [, ...]): the table package.loaded[name], else
// the global of that (dotted) name, made if need be; it gets _NAME, _M
// and _PACKAGE if it has no _NAME, becomes the environment of the calling
// function, and each further argument is called with it (package.seeall).
func (p *luaProcess) module(L *lua.LState) int {
	name := L.CheckString(1)
	loaded := p.modules().loaded
	mod, ok := L.GetField(loaded, name).(*lua.LTable)
	if !ok {
		if mod = p.findTable(L, name); mod == nil {
			L.RaiseError("name conflict for module '%s'", name)
		}
		loaded.RawSetString(name, mod)
	}
	if mod.RawGetString("_NAME") == lua.LNil {
		mod.RawSetString("_M", mod)
		mod.RawSetString("_NAME", lua.LString(name))
		pkg := ""
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			pkg = name[:i+1]
		}
		mod.RawSetString("_PACKAGE", lua.LString(pkg))
	}
	var caller *lua.LFunction
	if f := currentFrame(L); f != nil && f.Parent != nil {
		caller = f.Parent.Fn
	}
	if caller == nil || caller.IsG || isBuiltin(caller.Proto.SourceName) || caller.Env == p.tpl.L.G.Global {
		L.RaiseError("'module' not called from a Lua function")
	}
	caller.Env = mod
	for i, top := 2, L.GetTop(); i <= top; i++ {
		L.Push(L.Get(i))
		L.Push(mod)
		L.Call(1, 0)
	}
	return 0
}

// findTable is luaL_findtable(_G, name): the table at the dotted name,
// each missing level made; nil if a level holds something else. A
// built-in global not read yet is read (made) first.
func (p *luaProcess) findTable(L *lua.LState, name string) *lua.LTable {
	t := L.G.Global
	for i, part := range strings.Split(name, ".") {
		v := t.RawGetString(part)
		if v == lua.LNil && i == 0 && p.tpl.isBuiltinModule(part) {
			v = L.GetField(t, part)
		}
		switch v := v.(type) {
		case *lua.LNilType:
			nt := L.CreateTable(0, 0)
			t.RawSetString(part, nt)
			t = nt
		case *lua.LTable:
			t = v
		default:
			return nil
		}
	}
	return t
}

// packageSeeall is package.seeall(module): module's metatable gets
// __index = _G (the process's own globals). A table whose metatable is
// one of luarun's (a built-in module's, shared by every process) gets a
// metatable of its own instead, that reads that module first, then _G.
func packageSeeall(L *lua.LState) int {
	mod := L.CheckTable(1)
	g := L.G.Global
	mt, _ := mod.Metatable.(*lua.LTable)
	switch {
	case mt == nil:
		mt = L.CreateTable(0, 1)
		mod.Metatable = mt
	case procOf(L).tpl.isLuarunMT(mt):
		shared := mt.RawGetString("__index")
		mt = L.CreateTable(0, 1)
		mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			k := L.Get(2)
			if t, ok := shared.(*lua.LTable); ok {
				if v := t.RawGet(k); v != lua.LNil {
					L.Push(v)
					return 1
				}
			}
			L.Push(L.GetTable(g, k))
			return 1
		}))
		mod.Metatable = mt
		return 0
	}
	mt.RawSetString("__index", g)
	return 0
}

// isLuarunMT reports whether mt is one of luarun's metatables, which
// processes share (a file handle's,
// json.null's, any shared table: lua/cow.go). Every metatable luarun
// makes for values a script can reach must be one this finds.
func (tpl *template) isLuarunMT(mt *lua.LTable) bool {
	switch mt {
	case tpl.stringMT, tpl.fileMT:
		return true
	}
	if _, ok := lockedMTs.Load(mt); ok {
		return true
	}
	return mt.IsShared()
}
