package luaproc

// Building a process's Lua state.
//
// Opening gopher-lua's libraries makes ~150 function objects and a dozen
// tables per state, and filling a gopher-lua table costs allocations per
// key — most of the cost and memory of a process. So each Runtime builds
// a template state once (rebuilt when Register adds a command), and a
// process state gets only small tables of its own:
//
//   - _G starts with arg alone. Its metatable (shared, locked) has an
//     __index function that, on the first read of a name, puts the
//     template's base function there (print, pairs, pcall...), or a new
//     proxy for a module: a state pays only for the names it uses.
//   - each module (string, table, math, coroutine, os, process, time, log,
//     json, the application's) is a proxy that starts empty; its locked
//     metatable's __index is the template's table for that module.
//
// A script may assign into any of them (string.upper = f changes its own
// string proxy); it never reaches a shared table: locked metatables
// answer getmetatable with "locked", and proxies start empty (so
// pairs(string) lists only what the script added). The shared functions
// are never written, so states on different workers read them freely;
// they find their process through the calling coroutine's context
// (procOf). Functions made by prelude.lua are Lua closures whose
// environment is the template's globals; getfenv and setfenv are wrapped
// so that table never leaks (getfenv answers the state's own globals,
// setfenv refuses to change it).
//
// Strings' methods ("x"):upper() come from the built-in string library,
// whatever the script assigns to its own string table.
//
// io keeps per-state state (its default files), so it is opened lazily,
// in the state, on first use.

import (
	"sort"
	"strings"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/luaproc/lualib"
)

// Registry (value stack) sizes, in slots of 16 bytes: the main state only
// resumes coroutines and holds globals; the coroutines run the code. Both
// grow on demand, doubling (lua/FORK.md). A process
// waiting in receive uses 16 slots, 20 if it was spawned with an
// argument: it starts with 20.
const (
	mainRegistrySize = 8
	coRegistrySize   = 20
)

// luaCallDepth is how deep Lua calls may nest, Lua 5.1's LUAI_MAXCALLS;
// the frame stack grows on demand (lua/FORK.md).
const luaCallDepth = 20000

var stateOptions = lua.Options{
	SkipOpenLibs:        true,
	CallStackSize:       luaCallDepth,
	RegistrySize:        mainRegistrySize,
	RegistryMaxSize:     1 << 20,
	RegistryGrowStep:    128,
	MinimizeStackMemory: true,
}

// template is what every state of a Runtime copies or shares.
type template struct {
	L          *lua.LState            // the template state (kept: it owns the shared objects)
	globalsMT  *lua.LTable            // _G's metatable: __index fills _G on demand
	base       *lua.LTable            // the base functions (print, pairs...)
	moduleMT   map[string]*lua.LTable // a module proxy's metatable: __index the module
	boot       *lua.LFunction         // prelude.lua's boot
	trampoline *lua.LFunction         // prelude.lua's trampoline (process.all)
	counted    *lua.LFunction         // prelude.lua's counted trampoline (pcall, xpcall)
	sortFn     *lua.LFunction         // table.sort (named in blockContext)
	deniedMT   map[string]*lua.LTable // metatables of the stubs of switched-off modules
	execDenied *lua.LFunction         // os.execute and io.popen when exec is not allowed (else nil)
	stringMT   *lua.LTable            // strings' metatable: methods from the built-in string library
	rawResume  lua.LGFunction         // gopher-lua's coroutine.resume
	rawCreate  lua.LGFunction         // gopher-lua's coroutine.create (coCreate)
	supervise  *lua.LFunction         // a supervisor process's entry (supervisor.lua)
	loadedMT   *lua.LTable            // package.loaded's metatable: built-in modules are loaded
	searchers  []*lua.LFunction       // package.loaders' initial contents (require.go)
	loaders    *lua.LTable            // the searchers, for require while package.loaders is not made
	packageMT  *lua.LTable            // the package table's metatable: fields made on first read
	fileMT     *lua.LTable            // fs.open handles' metatable (fsfile.go)

	builtinLoader *lua.LFunction // the loader of package.loaders[4] (require.go)
	seeall        *lua.LFunction // package.seeall (module.go)
}

// tableLibs are the libraries whose tables each state copies.
var tableLibs = []struct {
	name string
	open lua.LGFunction
}{
	{lua.TabLibName, lua.OpenTable},
	{lua.StringLibName, lua.OpenString},
	{lua.MathLibName, lua.OpenMath},
	{lua.CoroutineLibName, lua.OpenCoroutine},
	{lua.OsLibName, lua.OpenOs},
}

// removedGlobals are base functions luarun does not offer.
var removedGlobals = []string{"_printregs", "_GOPHER_LUA_VERSION"}

func (rt *Runtime) template() *template {
	rt.tplMu.Lock()
	defer rt.tplMu.Unlock()
	if rt.tpl == nil {
		rt.tpl = rt.buildTemplate()
	}
	return rt.tpl
}

func (rt *Runtime) buildTemplate() *template {
	L := lua.NewState(stateOptions)
	open(L, lua.BaseLibName, lua.OpenBase)
	for _, lib := range tableLibs {
		open(L, lib.name, lib.open)
	}
	lualib.Install(L) // luarun's own string and table functions
	g := L.G.Global
	for _, name := range removedGlobals {
		g.RawSetString(name, lua.LNil)
	}
	tpl := &template{L: L, moduleMT: map[string]*lua.LTable{}}
	tpl.sortFn, _ = L.GetField(L.GetGlobal(lua.TabLibName), "sort").(*lua.LFunction)

	fn := func(f lua.LGFunction) *lua.LFunction { return L.NewFunction(f) }
	g.RawSetString("print", fn(rt.print))
	g.RawSetString("error", fn(luaError))
	g.RawSetString("module", fn(bind((*luaProcess).module))) // module.go
	L.Push(L.NewFunctionFromProto(builtinProto("require")))
	L.Push(loadingMarker)
	L.Push(fn(raiseAtScript))
	L.Push(fn(bind((*luaProcess).requireTables)))
	L.Push(fn(bind((*luaProcess).requireBegin)))
	L.Push(fn(bind((*luaProcess).requireFinish)))
	L.Push(fn(bind((*luaProcess).requireCheck)))
	L.Call(6, 1)
	g.RawSetString("require", L.Get(-1))
	L.Pop(1)
	tpl.searchers = []*lua.LFunction{
		fn(bind((*luaProcess).searchPreload)),
		fn(bind((*luaProcess).searchApp)),
		fn(bind((*luaProcess).searchFiles)),
		fn(bind((*luaProcess).searchBuiltin)),
	}
	tpl.builtinLoader = fn(bind((*luaProcess).loadBuiltin))
	tpl.seeall = fn(packageSeeall)
	tpl.loaders = tpl.newLoaders(L) // only require.lua reads it: never written
	g.RawSetString("getfenv", fn(wrapGetfenv(g, L.GetGlobal("getfenv").(*lua.LFunction).GFunction)))
	g.RawSetString("setfenv", fn(wrapSetfenv(g, L.GetGlobal("setfenv").(*lua.LFunction).GFunction)))
	if !rt.allowed["fs"] {
		denied := fn(deniedFunc("fs"))
		g.RawSetString("dofile", denied)
		g.RawSetString("loadfile", denied)
	}
	if !rt.allowed["exec"] { // os.execute and io.popen run commands too
		tpl.execDenied = fn(deniedFunc("exec"))
		L.GetGlobal(lua.OsLibName).(*lua.LTable).RawSetString("execute", tpl.execDenied)
	}
	processT := moduleTable(L, processFuncs)
	g.RawSetString("process", processT)
	g.RawSetString("time", moduleTable(L, timeFuncs))
	g.RawSetString("log", moduleTable(L, logFuncs))
	debugT := moduleTable(L, debugFuncs) // debuglib.go
	getfenv, setfenv := debugFenv(g.RawGetString("getfenv").(*lua.LFunction), g.RawGetString("setfenv").(*lua.LFunction))
	debugT.RawSetString("getfenv", fn(getfenv))
	debugT.RawSetString("setfenv", fn(setfenv))
	g.RawSetString("debug", debugT)
	jsonT := moduleTable(L, jsonFuncs)
	jsonT.RawSetString("null", jsonNull)
	g.RawSetString("json", jsonT)
	for module, t := range rt.globalModules(L) {
		g.RawSetString(module, t)
	}
	for module, fns := range ioModules() {
		if rt.allowed[module] {
			g.RawSetString(module, commandTable(L, module, fns, checkedCommandFunc))
		}
	}
	if rt.allowed["fs"] {
		tpl.loadFileHandles(L, g.RawGetString("fs").(*lua.LTable)) // fsfile.go
	}

	co := L.GetGlobal(lua.CoroutineLibName).(*lua.LTable)
	tpl.rawResume = L.GetField(co, "resume").(*lua.LFunction).GFunction
	tpl.rawCreate = L.GetField(co, "create").(*lua.LFunction).GFunction
	L.GetGlobal(lua.OsLibName).(*lua.LTable).RawSetString("exit", fn(bind((*luaProcess).osExit)))
	co.RawSetString("running", fn(bind((*luaProcess).running)))
	L.Push(L.NewFunctionFromProto(builtinProto("prelude")))
	L.Push(cmdMarker)
	L.Push(fn(bind((*luaProcess).coCreate)))
	L.Push(L.GetField(co, "yield"))
	L.Push(L.GetField(co, "status"))
	L.Push(fn(paddedResume(L.GetField(co, "resume").(*lua.LFunction).GFunction)))
	L.Push(fn(bind((*luaProcess).all)))
	L.Push(co)
	L.Push(processT)
	L.Push(fn(bind((*luaProcess).arm)))
	L.Push(fn(bind((*luaProcess).resolve)))
	L.Push(fn(bind((*luaProcess).pstart)))
	L.Push(fn(bind((*luaProcess).presume)))
	L.Push(fn(bind((*luaProcess).armHandler)))  // debuglib.go
	L.Push(fn(bind((*luaProcess).takeHandled))) // debuglib.go
	L.Call(14, 3)
	tpl.boot = L.Get(-3).(*lua.LFunction)
	tpl.trampoline = L.Get(-2).(*lua.LFunction)
	tpl.counted = L.Get(-1).(*lua.LFunction)
	L.Pop(3)

	supT := tpl.loadSupervisor(L, processT, fn(bind((*luaProcess).spawnSupervisor)))
	g.RawSetString("supervisor", supT)

	tpl.deniedMT = map[string]*lua.LTable{}
	for _, name := range Permissions {
		if rt.allowed[name] {
			continue
		}
		mt := L.CreateTable(0, 2)
		mt.RawSetString("__metatable", lua.LString("locked"))
		index := deniedFunc(name)
		if name == lua.OsLibName { // reading the clock needs no permission
			index = clockOnly(g.RawGetString(name).(*lua.LTable), index)
		}
		mt.RawSetString("__index", fn(index))
		tpl.deniedMT[name] = mt
	}
	tpl.base = L.CreateTable(0, 48)
	g.ForEach(func(k, v lua.LValue) {
		name := string(k.(lua.LString))
		switch t, isTable := v.(*lua.LTable); {
		case name == "_G":
		case isTable:
			unshareTables(t)
			t.Freeze() // read by every process, never written again
			tpl.moduleMT[name] = lockedIndex(L, t)
		default:
			tpl.base.RawSetString(name, v)
		}
	})
	tpl.base.Freeze()
	tpl.stringMT = L.CreateTable(0, 2) // shared: its __index is unreachable from Lua
	tpl.stringMT.RawSetString("__index", L.GetGlobal(lua.StringLibName))
	tpl.stringMT.RawSetString("__metatable", lua.LString("locked"))
	tpl.globalsMT = L.CreateTable(0, 2)
	tpl.globalsMT.RawSetString("__index", fn(tpl.globalIndex))
	tpl.globalsMT.RawSetString("__metatable", lua.LString("locked"))
	tpl.loadedMT = L.CreateTable(0, 2)
	tpl.loadedMT.RawSetString("__index", fn(tpl.loadedIndex))
	tpl.loadedMT.RawSetString("__metatable", lua.LString("locked"))
	tpl.packageMT = L.CreateTable(0, 3)
	tpl.packageMT.RawSetString("__index", fn(tpl.packageIndex))
	tpl.packageMT.RawSetString("__newindex", fn(packageNewIndex))
	tpl.packageMT.RawSetString("__metatable", lua.LString("locked"))
	return tpl
}

// globalIndex is _G's __index: the first read of a built-in name puts it
// into the reading state's _G (a base function, or a new module proxy);
// any other name is nil.
func (tpl *template) globalIndex(L *lua.LState) int {
	g := L.CheckTable(1)
	key, ok := L.Get(2).(lua.LString)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	v := tpl.globalValue(L, g, string(key))
	L.Push(v)
	return 1
}

// globalValue makes the value of built-in global name for the state whose
// globals are g, and stores it there; nil if name is not built in.
func (tpl *template) globalValue(L *lua.LState, g *lua.LTable, name string) lua.LValue {
	var v lua.LValue = lua.LNil
	switch {
	case name == "_G":
		v = g
	case name == "package":
		v = procOf(L).modules().pkg
	case name == "arg":
		v = procOf(L).argTable()
	case tpl.deniedMT[name] != nil || tpl.moduleMT[name] != nil:
		if p := procOf(L); p.mods != nil { // the one package.loaded has
			if m := p.mods.loaded.RawGetString(name); tpl.isModuleTable(m, name) {
				v = m
				break
			}
			if m := p.mods.loaded.RawGetString(luarunPrefix + name); tpl.isModuleTable(m, name) {
				v = m
				break
			}
		}
		v = tpl.newModule(L, name)
	default:
		v = tpl.base.RawGetString(name)
	}
	if v != lua.LNil {
		g.RawSetString(name, v)
	}
	return v
}

// newModule makes a process's table for built-in or application module
// name: a proxy of the shared table, or a stub of a module not allowed.
func (tpl *template) newModule(L *lua.LState, name string) *lua.LTable {
	if tpl.deniedMT[name] != nil {
		return deniedModule(L, tpl, name)
	}
	proxy := L.CreateTable(0, 0)
	proxy.Metatable = tpl.moduleMT[name]
	return proxy
}

// isModuleTable reports whether v is a table newModule made for name.
func (tpl *template) isModuleTable(v lua.LValue, name string) bool {
	t, ok := v.(*lua.LTable)
	return ok && t.Metatable != lua.LNil && (t.Metatable == tpl.moduleMT[name] || t.Metatable == tpl.deniedMT[name])
}

// unshareTables removes the table-valued fields of a shared module (the
// string library's __index is the library itself): a script reading one
// would hold a shared table it could write.
func unshareTables(t *lua.LTable) {
	var keys []lua.LValue
	t.ForEach(func(k, v lua.LValue) {
		if _, ok := v.(*lua.LTable); ok {
			keys = append(keys, k)
		}
	})
	for _, k := range keys {
		t.RawSet(k, lua.LNil)
	}
}

// lockedIndex is a shared metatable for proxies of t: reads fall through
// to t; Lua cannot read or replace the metatable. (Reads are not cached
// in the proxy: an empty proxy costs nothing to miss in, while t and the
// metatable are shared and so stay in cache across thousands of states.)
func lockedIndex(L *lua.LState, t *lua.LTable) *lua.LTable {
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", t)
	mt.RawSetString("__metatable", lua.LString("locked"))
	return mt
}

func open(L *lua.LState, name string, f lua.LGFunction) {
	L.Push(L.NewFunction(f))
	L.Push(lua.LString(name))
	L.Call(1, 0)
}

// setupState makes p.L from the template, on a recycled state if there
// is one (then it returns the recycled root coroutine).
func (rt *Runtime) setupState(p *luaProcess) (co *lua.LState) {
	tpl := rt.template()
	var L *lua.LState
	if ps := rt.reusedState(); ps != nil {
		L, co = ps.L, ps.co
	} else {
		L = lua.NewState(stateOptions)
		L.Options.RegistrySize = coRegistrySize // for the coroutines made from L
	}
	p.L, p.tpl = L, tpl
	g := L.G.Global
	g.Metatable = tpl.globalsMT
	if rt.allowed[lua.IoLibName] {
		p.io = lazyIo(L, tpl)
		g.RawSetString(lua.IoLibName, p.io)
	}
	L.SetMetatable(lua.LString(""), tpl.stringMT)
	return co
}

// notAllowed is the message docs/lua-api.md gives for a switched-off module.
func notAllowed(module string) string {
	return module + " is not allowed (run without --sandbox or with --allow " + module + ")"
}

// deniedFunc raises the not-allowed error of module.
func deniedFunc(module string) lua.LGFunction {
	return func(L *lua.LState) int {
		L.RaiseError("%s", notAllowed(module))
		return 0
	}
}

// clockFuncs are the functions of os that a switched-off os still has:
// they only read the clock.
var clockFuncs = map[string]bool{"time": true, "clock": true, "date": true, "difftime": true}

// clockOnly is the __index of a switched-off os: the clock functions of
// osT, and denied for the rest.
func clockOnly(osT *lua.LTable, denied lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if key, ok := L.Get(2).(lua.LString); ok && clockFuncs[string(key)] {
			L.Push(osT.RawGetString(string(key)))
			return 1
		}
		return denied(L)
	}
}

// deniedModule stands in for a module that is switched off: reading any
// of its fields raises the not-allowed error. Its metatable is shared and
// locked (getmetatable answers "locked").
func deniedModule(L *lua.LState, tpl *template, name string) *lua.LTable {
	t := L.CreateTable(0, 0)
	t.Metatable = tpl.deniedMT[name]
	return t
}

// lazyIo stands in for io until a field is read; then it opens the io
// library in this state (io keeps per-state files) and answers from it.
func lazyIo(L *lua.LState, tpl *template) *lua.LTable {
	t := L.CreateTable(0, 0)
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__metatable", lua.LString("locked"))
	var real *lua.LTable
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		if real == nil {
			L.G.Registry.RawSetString(ioOpenedKey, lua.LTrue) // not recycled (pool.go)
			open(L, lua.IoLibName, lua.OpenIo)                // replaces the global io
			real, _ = L.G.Global.RawGetString(lua.IoLibName).(*lua.LTable)
			if real == nil {
				L.RaiseError("io could not be opened")
			}
			if tpl.execDenied != nil {
				real.RawSetString("popen", tpl.execDenied)
			}
		}
		L.Push(real.RawGet(L.Get(2)))
		return 1
	}))
	t.Metatable = mt
	return t
}

// requirable are the modules require() returns (besides app modules).
var requirable = []string{"process", "time", "log", "json", "string", "table", "math", "coroutine", "os", "io", "fs", "http", "exec", "package", "supervisor"}

// Permissions are the modules Options.Allow switches on (all of them in
// the command-line runner unless --sandbox).
var Permissions = []string{lua.OsLibName, lua.IoLibName, "fs", "http", "exec"}

// ioModules are the I/O commands (commands.IO) by module: fs, http, exec.
func ioModules() map[string][]string {
	m := map[string][]string{}
	for _, name := range commands.Commands() {
		module, fn, _ := strings.Cut(name, ".")
		m[module] = append(m[module], fn)
	}
	return m
}

// commandTable is the module table of commands module.fns.
func commandTable(L *lua.LState, module string, fns []string, maker func(string) lua.LGFunction) *lua.LTable {
	t := L.CreateTable(0, len(fns))
	for _, f := range fns {
		t.RawSetString(f, L.NewFunction(maker(module+"."+f)))
	}
	return t
}

// wrapGetfenv answers the calling state's globals where gopher-lua would
// answer the template's (for a function the prelude made).
func wrapGetfenv(tplEnv *lua.LTable, orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		n := orig(L)
		if n == 1 && L.Get(-1) == lua.LValue(tplEnv) {
			L.Pop(1)
			L.Push(L.G.Global)
		}
		return n
	}
}

// wrapSetfenv refuses to change the environment of a shared function.
func wrapSetfenv(tplEnv *lua.LTable, orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		var target *lua.LFunction
		switch v := L.Get(1).(type) {
		case *lua.LFunction:
			target = v
		case lua.LNumber:
			// Find the frame the way gopher-lua's setfenv does: level
			// parents up from setfenv's own frame, tail calls not counted.
			// Level 0 sets the coroutine's environment, the state's own.
			if level := int(v); level > 0 {
				f := currentFrame(L)
				for i := 0; i < level && f != nil; i++ {
					f = f.Parent
				}
				if f != nil {
					target = f.Fn
				}
			}
		}
		if target != nil && target.Env == tplEnv {
			L.RaiseError("setfenv: cannot change the environment of a luarun built-in")
		}
		return orig(L)
	}
}

// argTable is the global arg table as the standalone lua makes it: arg[0]
// the script, arg[1..n] the process's arguments.
//
// It is made when the process first reads arg (globalValue): most never
// do, and the table was a sixth of an idle process's memory. A process
// that sets arg to nil before reading it reads the arguments afterwards.
func (p *luaProcess) argTable() *lua.LTable {
	t := p.L.CreateTable(len(p.input), 1)
	t.RawSetInt(0, lua.LString(p.script.name))
	for i, v := range p.input {
		t.RawSetInt(i+1, toLuaValue(p.L, v))
	}
	return t
}

// arm (called first by boot, in the root task) makes every error raised
// in the root coroutine record its traceback before the stack unwinds.
func (p *luaProcess) arm(L *lua.LState) int {
	L.Panic = func(L *lua.LState) {
		p.trace = traceback(L, p.entryName())
		panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: L.Get(-1)})
	}
	return 0
}

// entryName is the name tracebacks give the entry point.
func (p *luaProcess) entryName() string {
	switch p.entry {
	case "":
		return "main"
	case supervisorEntry:
		return "supervisor"
	}
	return p.entry
}

// resolve finds the entry point once the chunk has run: first is the
// chunk's first result. It returns nil when the chunk is the program.
// The chunk has ended, so the process may spawn from here on; the
// script's entries are known from now on (process.spawn checks them).
func (p *luaProcess) resolve(L *lua.LState) int {
	p.topLevel = false
	entry := L.CheckString(1)
	module, _ := L.Get(2).(*lua.LTable)
	if p.script.entries.Load() == nil {
		names := p.entryNames(L, module)
		p.script.entries.CompareAndSwap(nil, &names)
	}
	if entry == supervisorEntry {
		L.Push(p.tpl.supervise)
		return 1
	}
	name := entry
	if name == "" {
		name = "main"
	}
	if fn := p.entryNamed(L, module, name); fn != nil {
		L.Push(fn)
		return 1
	}
	if entry == "" {
		p.chunkRun = true
		L.Push(lua.LNil)
		return 1
	}
	p.entryErr = &EntryError{Script: p.script.name, Entry: entry, Entries: p.entryNames(L, module)}
	L.RaiseError("%s", p.entryErr.Error())
	return 0
}

// entryNamed is the entry point called name: a function of module, the
// table the chunk returned, or without one a global function the script
// defined (not a built-in that globalIndex copied in); nil if none.
func (p *luaProcess) entryNamed(L *lua.LState, module *lua.LTable, name string) *lua.LFunction {
	if module != nil {
		fn, _ := module.RawGetString(name).(*lua.LFunction)
		return fn
	}
	v := L.G.Global.RawGetString(name)
	if fn, ok := v.(*lua.LFunction); ok && p.tpl.base.RawGetString(name) != v {
		return fn
	}
	return nil
}

// entryNames are the names of the script's entry points (what
// entryNamed finds), sorted.
func (p *luaProcess) entryNames(L *lua.LState, module *lua.LTable) []string {
	var names []string
	t := L.G.Global
	if module != nil {
		t = module
	}
	t.ForEach(func(k, _ lua.LValue) {
		if name, ok := k.(lua.LString); ok && p.entryNamed(L, module, string(name)) != nil {
			names = append(names, string(name))
		}
	})
	sort.Strings(names)
	return names
}
