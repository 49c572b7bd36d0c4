package luaproc

// Building a process's Lua state: the standard libraries the contract
// names, the replacements that make blocking calls work everywhere
// (prelude.lua), the luarun modules and the application's commands.

import (
	_ "embed"
	"sort"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// preludeName is prelude.lua's source name (left out of tracebacks).
const preludeName = "luarun:prelude"

//go:embed prelude.lua
var preludeSource string

// preludeProto is prelude.lua compiled once for every state.
var preludeProto = sync.OnceValue(func() *lua.FunctionProto {
	chunk, err := parse.Parse(strings.NewReader(preludeSource), preludeName)
	if err != nil {
		panic("luaproc: prelude.lua: " + err.Error())
	}
	proto, err := lua.Compile(chunk, preludeName)
	if err != nil {
		panic("luaproc: prelude.lua: " + err.Error())
	}
	return proto
})

// stateOptions keep an idle state small: the stacks start small and grow.
var stateOptions = lua.Options{
	SkipOpenLibs:        true,
	CallStackSize:       200,
	RegistrySize:        256,
	RegistryMaxSize:     1 << 20,
	RegistryGrowStep:    256,
	MinimizeStackMemory: true,
}

// Modules that may be switched off (LUA_API.md, permissions).
var optionalLibs = map[string]lua.LGFunction{
	lua.OsLibName: lua.OpenOs,
	lua.IoLibName: lua.OpenIo,
}

// setupState makes p.L and everything in it.
func (rt *Runtime) setupState(p *luaProcess) error {
	L := lua.NewState(stateOptions)
	p.L = L
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range sortedNames(optionalLibs) {
		if rt.allowed[name] {
			L.Push(L.NewFunction(optionalLibs[name]))
			L.Push(lua.LString(name))
			L.Call(1, 0)
		} else {
			L.SetGlobal(name, deniedModule(L, name))
		}
	}
	if !rt.allowed["fs"] {
		denied := L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s", notAllowed("fs"))
			return 0
		})
		L.SetGlobal("dofile", denied)
		L.SetGlobal("loadfile", denied)
	}
	L.SetGlobal("print", L.NewFunction(rt.print))
	p.sortFn, _ = L.GetField(L.GetGlobal(lua.TabLibName), "sort").(*lua.LFunction)

	processT := p.processModule()
	L.SetGlobal("process", processT)
	L.SetGlobal("time", p.timeModule())
	L.SetGlobal("log", p.logModule())
	L.SetGlobal("json", p.jsonModule())
	for module, fns := range rt.appModules() {
		t := L.CreateTable(0, len(fns))
		for _, fn := range fns {
			t.RawSetString(fn, L.NewFunction(p.command(module+"."+fn)))
		}
		L.SetGlobal(module, t)
	}
	L.SetGlobal("require", L.NewFunction(p.require))
	p.setArgs()

	co := L.GetGlobal(lua.CoroutineLibName).(*lua.LTable)
	rawResume := L.GetField(co, "resume").(*lua.LFunction).GFunction
	padded := func(L *lua.LState) int {
		th := L.CheckThread(1)
		if n := wantedResults(th); n >= 0 { // see fitValues
			for L.GetTop()-1 < n {
				L.Push(lua.LNil)
			}
			L.SetTop(n + 1)
		}
		return rawResume(L)
	}
	L.Push(L.NewFunctionFromProto(preludeProto()))
	L.Push(cmdMarker)
	L.Push(L.GetField(co, "create"))
	L.Push(L.GetField(co, "yield"))
	L.Push(L.GetField(co, "status"))
	L.Push(L.NewFunction(padded))
	L.Push(L.NewFunction(p.all))
	L.Push(co)
	L.Push(processT)
	if err := L.PCall(8, 1, nil); err != nil {
		return err
	}
	p.boot = L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	rt.noteBaseGlobals(L)
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// notAllowed is the message LUA_API.md gives for a switched-off module.
func notAllowed(module string) string {
	return module + " is not allowed (run without --sandbox or with --allow " + module + ")"
}

// deniedModule stands in for a module that is switched off: using any of
// its fields raises the not-allowed error.
func deniedModule(L *lua.LState, name string) *lua.LTable {
	t := L.CreateTable(0, 0)
	mt := L.CreateTable(0, 1)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s", notAllowed(name))
		return 0
	}))
	L.SetMetatable(t, mt)
	return t
}

// requirable are the modules require() returns (besides app modules).
var requirable = []string{"process", "time", "log", "json", "string", "table", "math", "coroutine", "os", "io"}

func (p *luaProcess) require(L *lua.LState) int {
	name := L.CheckString(1)
	known := false
	for _, n := range requirable {
		known = known || n == name
	}
	if _, ok := p.rt.appModules()[name]; ok {
		known = true
	}
	if !known {
		L.RaiseError("module '%s' not found (luarun provides %s and the application's modules)", name, strings.Join(requirable, ", "))
	}
	L.Push(L.GetGlobal(name))
	return 1
}

// setArgs sets the global arg table as the standalone lua does: arg[0]
// the script, arg[1..n] the process's arguments.
func (p *luaProcess) setArgs() {
	t := p.L.CreateTable(len(p.input), 1)
	t.RawSetInt(0, lua.LString(p.script.name))
	for i, v := range p.input {
		t.RawSetInt(i+1, toLuaValue(p.L, v))
	}
	p.L.SetGlobal("arg", t)
}

// arm (called first by boot, in the root task) makes every error raised
// in the root coroutine record its traceback before the stack unwinds.
func (p *luaProcess) arm(L *lua.LState) int {
	L.Panic = func(L *lua.LState) {
		entry := p.entry
		if entry == "" {
			entry = "main"
		}
		p.trace = traceback(L, entry)
		panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: L.Get(-1)})
	}
	return 0
}

// resolve finds the entry point once the chunk has run: first is the
// chunk's first result. It returns nil when the chunk is the program.
func (p *luaProcess) resolve(L *lua.LState) int {
	entry := L.CheckString(1)
	entries := map[string]*lua.LFunction{}
	if t, ok := L.Get(2).(*lua.LTable); ok {
		t.ForEach(func(k, v lua.LValue) {
			if name, ok := k.(lua.LString); ok {
				if fn, ok := v.(*lua.LFunction); ok {
					entries[string(name)] = fn
				}
			}
		})
	} else {
		base := p.rt.baseGlobals()
		L.G.Global.ForEach(func(k, v lua.LValue) {
			if name, ok := k.(lua.LString); ok && !base[string(name)] {
				if fn, ok := v.(*lua.LFunction); ok {
					entries[string(name)] = fn
				}
			}
		})
	}
	name := entry
	if name == "" {
		name = "main"
	}
	if fn, ok := entries[name]; ok {
		L.Push(fn)
		return 1
	}
	if entry == "" {
		p.chunkRun = true
		L.Push(lua.LNil)
		return 1
	}
	p.entryErr = &EntryError{Script: p.script.name, Entry: entry, Entries: sortedNames(entries)}
	L.RaiseError("%s", p.entryErr.Error())
	return 0
}
