package luaproc

// Building a process's Lua state.
//
// Opening the libraries makes ~150 function objects and a dozen tables
// per state, and filling a table costs allocations per key — most of the
// cost and memory of a process. So each Runtime builds a template state
// once (rebuilt when Register adds a command) and shares what it made:
// the base functions and the module tables (string, table, math,
// coroutine, os, process, time, log, json, debug, supervisor, pool, the
// application's) are gathered in one shared table, tpl.globals, and
// every process's _G is a copy-on-write view of it (lua/cow.go):
//
//   - a read falls through to the shared table; a module table read
//     that way becomes this state's view of it (one per state, so
//     _G.string, package.loaded.string and getmetatable("").__index are
//     one table). A process that only reads pays for nothing but the
//     views of the modules it names.
//   - to the script these are ordinary tables, as in Lua 5.1: rawget,
//     pairs, next and setmetatable see every function; a write, a
//     removal or a traversal stays in this state (a removal or a
//     traversal first copies the shared entries in).
//   - strings' metatable is shared until the state has its own string
//     table; then it is this state's view too, so the string functions a
//     script adds are methods of its strings.
//
// The shared tables are never written (a write panics), so states on
// different workers read them freely; the shared functions find their
// process through the calling coroutine's context (procOf). Functions
// made by prelude.lua are Lua closures whose environment is the
// template's globals; getfenv and setfenv are wrapped so that table
// never leaks (getfenv answers the state's own globals, setfenv refuses
// to change it).
//
// package, io and arg are each state's own, made on first read
// (template.ViewFor): io keeps per-state files, package.path depends on
// the script's directory, arg on the process's arguments.

import (
	"sort"
	"strings"
	"sync"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/luaproc/lualib"
	"github.com/luarun/luarun/optcheck"
)

// Registry (value stack) sizes, in slots of 16 bytes: the main state only
// resumes coroutines and holds globals; the coroutines run the code. Both
// grow on demand, doubling (lua/FORK.md). A process's main state holds
// at most 2 values (the luaproc tests grow none past 2; the template's
// state, built once a runtime, grows its own): 2 slots are 32 bytes,
// where 8 were 128. A process waiting in receive uses 13 slots, 14 if
// it was started with two arguments (its entry naming its parameters; a
// vararg entry needs up to 19): its coroutine starts with 16, 256 bytes
// (TestIdleCoroutineStack).
const (
	mainRegistrySize = 2
	coRegistrySize   = 16
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
	PropagateGoPanics:   true, // internal.go: a Go panic ends the process, pcall or not
}

// template is what every state of a Runtime copies or shares.
type template struct {
	L          *lua.LState    // the template state (kept: it owns the shared objects)
	globals    *lua.LTable    // shared: what every state's _G is a view of (lua/cow.go)
	boot       *lua.LFunction // prelude.lua's boot
	trampoline *lua.LFunction // prelude.lua's trampoline (process.all)
	counted    *lua.LFunction // prelude.lua's counted trampoline (pcall, xpcall)
	sortFn     *lua.LFunction // table.sort (named in blockContext)
	execDenied *lua.LFunction // os.execute and io.popen when exec is not allowed (else nil)
	stringMT   *lua.LTable    // shared: strings' metatable until a state has its own string table
	// markers in globals of the values a state makes for itself (ViewFor)
	packageMarker, argMarker, ioMarker *lua.LTable
	rawResume                          lua.LGFunction   // gopher-lua's coroutine.resume
	rawCreate                          lua.LGFunction   // gopher-lua's coroutine.create (coCreate)
	supervise                          *lua.LFunction   // a supervisor process's entry (supervisor.lua)
	searchers                          []*lua.LFunction // package.loaders' initial contents (require.go)
	loaders                            *lua.LTable      // shared: package.loaders' default, the searchers
	loaded                             *lua.LTable      // shared: package.loaded's default (_G, package, the libraries, luarun.<module>)
	preload                            *lua.LTable      // shared: package.preload's default, empty
	packages                           sync.Map         // program directory -> its shared package table (packageTemplate)
	fileMT                             *lua.LTable      // fs.open handles' metatable (fsfile.go)

	globalsCount int            // the entries of globals
	noChunk      *lua.LFunction // runs in place of a chunk that need not (scriptglobals.go)

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

// template returns the runtime's template, built at the first start
// after a registration (newTemplate).
func (rt *Runtime) template() *template {
	if tpl := rt.tpl.Load(); tpl != nil {
		return tpl // every start but the first after a registration: no lock for all workers to meet
	}
	rt.tplMu.Lock()
	defer rt.tplMu.Unlock()
	tpl := rt.tpl.Load()
	if tpl == nil {
		tpl = rt.buildTemplate()
		rt.tpl.Store(tpl)
	}
	return tpl
}

func (rt *Runtime) buildTemplate() *template {
	L := lua.NewState(stateOptions)
	open(L, lua.BaseLibName, lua.OpenBase)
	for _, lib := range tableLibs {
		open(L, lib.name, lib.open)
	}
	lualib.Install(L) // luarun's own string and table functions
	// gopher-lua's string table is its own __index; Lua 5.1's is not
	strT := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	strT.RawSetString("__index", lua.LNil)
	strT.RawSetString("dump", L.NewFunction(dumpScriptFunction(strT.RawGetString("dump").(*lua.LFunction).GFunction)))
	g := L.G.Global
	for _, name := range removedGlobals {
		g.RawSetString(name, lua.LNil)
	}
	tpl := &template{L: L}
	tpl.sortFn, _ = L.GetField(L.GetGlobal(lua.TabLibName), "sort").(*lua.LFunction)

	fn := func(f lua.LGFunction) *lua.LFunction { return L.NewFunction(f) }
	g.RawSetString("print", fn(rt.print))
	g.RawSetString("error", fn(luaError))
	g.RawSetString("module", fn(bind((*luaProcess).module))) // module.go
	g.RawSetString("inspect", fn(luaInspect))                // inspect.go
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
	tpl.loaders = L.CreateTable(len(tpl.searchers), 0)
	for _, s := range tpl.searchers {
		tpl.loaders.Append(s)
	}
	tpl.loaders.Share()
	tpl.preload = L.CreateTable(0, 0)
	tpl.preload.Share()
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
	if rt.allowed["exec"] {
		tpl.loadExecStreams(L, g.RawGetString("exec").(*lua.LTable)) // fsfile.go
	}
	rt.addServing(L, g) // http.serve, net (serving.go)

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
	// after the prelude, which takes the raw status (forward.go)
	co.RawSetString("status", fn(coStatus(L.GetField(co, "status").(*lua.LFunction).GFunction)))

	supT := tpl.loadSupervisor(L, processT, fn(bind((*luaProcess).spawnSupervisor)))
	g.RawSetString("supervisor", supT)
	L.Push(L.NewFunctionFromProto(builtinProto("pool"))) // pool.map
	L.Push(processT)
	L.Push(L.NewFunction(unknownOption))
	L.Call(2, 1)
	g.RawSetString("pool", L.Get(-1))
	L.Pop(1)

	if rt.extraGlobals != nil {
		rt.extraGlobals(L, g)
	}
	tpl.globals = tpl.shareGlobals(rt, L, g)
	tpl.globals.ForEach(func(lua.LValue, lua.LValue) { tpl.globalsCount++ })
	tpl.noChunk = L.NewFunction(noChunk)
	tpl.stringMT = L.CreateTable(0, 2) // every state's until it has its own string table
	tpl.stringMT.RawSetString("__index", tpl.globals.RawGetString(lua.StringLibName))
	tpl.stringMT.Share()
	tpl.loaded = tpl.sharedLoaded(L)
	return tpl
}

// shareGlobals makes the shared globals every state's _G is a view of
// (lua/cow.go): the base functions, the module tables (shared, as are
// the tables in them), "_G" itself, stand-ins for the modules this
// runtime does not allow, and markers for the values a state makes for
// itself (package, io, arg: ViewFor).
func (tpl *template) shareGlobals(rt *Runtime, L *lua.LState, g *lua.LTable) *lua.LTable {
	globals := L.CreateTable(0, 64)
	g.ForEach(func(k, v lua.LValue) {
		if t, ok := v.(*lua.LTable); ok {
			if k == lua.LString("_G") || k == lua.LString(lua.IoLibName) {
				return
			}
			shareDeep(t)
		}
		globals.RawSet(k, v)
	})
	globals.RawSetString("_G", globals)
	for _, name := range permissions {
		if rt.allowed[name] || servePermissions[name] {
			continue
		}
		mt := L.CreateTable(0, 2)
		mt.RawSetString("__metatable", lua.LString("locked"))
		index := deniedFunc(name)
		if name == lua.OsLibName { // reading the clock needs no permission
			index = clockOnly(g.RawGetString(name).(*lua.LTable), index)
		} else if t, ok := g.RawGetString(name).(*lua.LTable); ok { // http.serve (serving.go)
			index = passThrough(t, index)
		}
		mt.RawSetString("__index", L.NewFunction(index))
		mt.Share()
		stub := L.CreateTable(0, 0)
		stub.Metatable = mt
		stub.Share()
		globals.RawSetString(name, stub)
	}
	marker := func(name string) *lua.LTable {
		t := L.CreateTable(0, 0)
		t.Share()
		globals.RawSetString(name, t)
		return t
	}
	tpl.packageMarker = marker("package")
	tpl.argMarker = marker("arg")
	if rt.allowed[lua.IoLibName] {
		tpl.ioMarker = marker(lua.IoLibName)
	}
	globals.Share()
	return globals
}

// sharedLoaded makes the shared package.loaded every state's is a view
// of: _G, package and Lua 5.1's libraries (require finds them before any
// searcher), and luarun.<name> for each module, luarun's, the
// application's and Lua's. luarun's modules are not there under their own names: a file
// on package.path comes first (searchBuiltin).
func (tpl *template) sharedLoaded(L *lua.LState) *lua.LTable {
	loaded := L.CreateTable(0, 32)
	tpl.globals.ForEach(func(k, v lua.LValue) {
		name, _ := k.(lua.LString)
		if name == "_G" || name == "package" || stdLibs[string(name)] {
			loaded.RawSetString(string(name), v)
		}
		if tpl.isBuiltinModule(string(name)) {
			loaded.RawSetString(luarunPrefix+string(name), v)
		}
	})
	loaded.Share()
	return loaded
}

// shareDeep marks t and the tables in it shared (lua/cow.go).
func shareDeep(t *lua.LTable) {
	if t.IsShared() {
		return
	}
	var inner []*lua.LTable
	t.ForEach(func(_, v lua.LValue) {
		if it, ok := v.(*lua.LTable); ok {
			inner = append(inner, it)
		}
	})
	if mt, ok := t.Metatable.(*lua.LTable); ok {
		inner = append(inner, mt)
	}
	t.Share()
	for _, it := range inner {
		shareDeep(it)
	}
}

// ViewFor is the state's value for the shared markers (lua.ViewMaker):
// its package table, its io library (opened in the state now: io keeps
// per-state files), its arg table. Any other shared table gets a view.
func (p *luaProcess) ViewFor(set *lua.ViewSet, shared *lua.LTable) *lua.LTable {
	tpl := p.tpl
	switch shared {
	case tpl.packageMarker:
		return set.View(tpl.packageTemplate(p))
	case tpl.argMarker:
		return p.argTable()
	case tpl.ioMarker:
		return p.openIo()
	}
	return nil
}

// isBuiltinModule reports whether name is a module of the shared globals
// (a library, luarun's, the application's, or a stand-in).
func (tpl *template) isBuiltinModule(name string) bool {
	t, ok := tpl.globals.RawGetString(name).(*lua.LTable)
	return ok && t != tpl.argMarker && t != tpl.globals
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
	globals, _ := p.globalsFor(tpl)
	var L *lua.LState
	kept := false
	if ps, k := rt.reusedState(globals, tpl.stringMT); ps != nil {
		L, co, kept = ps.L, ps.co, k
		ps.L, ps.co, p.pooled = nil, nil, ps
	} else {
		L = lua.NewState(stateOptions)
		L.Options.RegistrySize = coRegistrySize // for the coroutines made from L
	}
	p.L, p.tpl = L, tpl
	if L.G.GCRoots == nil { // a new state (a recycled one keeps its own)
		L.G.GCRoots = gcRootsOf(L.G)
	}
	views := &L.G.Views
	views.Maker = p
	p.startMemory()
	if kept {
		rt.keptViews.Add(1)
	} else {
		views.Bind(globals)
		L.SetMetatable(lua.LString(""), tpl.stringMT)
	}
	return co
}

// gcRootsOf is state g's Global.GCRoots: what the tasks of the process
// now using it hold, for __gc (lua/gc.go). It finds the process from the
// state (its view maker) rather than holding one, so that it is made once
// per state, not per process (recycle clears the maker of a pooled state).
func gcRootsOf(g *lua.Global) func() []lua.LValue {
	return func() []lua.LValue {
		if p, ok := g.Views.Maker.(*luaProcess); ok {
			return p.gcRoots()
		}
		return nil
	}
}

// dumpScriptFunction is string.dump for scripts: luarun's own Lua
// functions (pcall, require, coroutine.wrap's results...), which scripts
// see as Go functions, are refused as Lua 5.1 refuses a C function.
func dumpScriptFunction(dump lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if fn, ok := L.Get(1).(*lua.LFunction); ok && !fn.IsG && isBuiltin(fn.Proto.SourceName) {
			L.RaiseError("unable to dump given function")
		}
		return dump(L)
	}
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

// openIo opens the io library in p's state, where io keeps its default
// files, when the process first reads io; popen is denied without exec.
func (p *luaProcess) openIo() *lua.LTable {
	L := p.L
	if cur := L.G.CurrentThread; cur != nil {
		L = cur // the running coroutine (the main state waits in resume)
	}
	L.G.Registry().RawSetString(ioOpenedKey, lua.LTrue) // not recycled (pool.go)
	// OpenIo fills the table it finds registered as loaded, so that it
	// does not read the global io, whose first read is what asks for it
	io := L.CreateTable(0, 20)
	L.FindTable(L.G.Registry(), "_LOADED", 1).(*lua.LTable).RawSetString(lua.IoLibName, io)
	L.Push(L.NewFunction(lua.OpenIo))
	L.Push(lua.LString(lua.IoLibName))
	L.Call(1, 1)
	L.Pop(1)
	if p.tpl.execDenied != nil {
		io.RawSetString("popen", p.tpl.execDenied)
	}
	return io
}

// requirable are the modules require() returns (besides app modules).
var requirable = []string{"process", "time", "log", "json", "string", "table", "math", "coroutine", "os", "io", "fs", "http", "exec", "package", "supervisor", "pool", "net"}

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
// answer the template's (for a function the prelude made). A level is
// counted as Lua 5.1 counts it (fenvLevel).
func wrapGetfenv(tplEnv *lua.LTable, orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if fn, ok := fenvLevel(L); ok {
			L.Push(fn.Env)
			if fn.IsG || fn.Env == tplEnv {
				L.Pop(1)
				L.Push(L.G.Global)
			}
			return 1
		}
		n := orig(L)
		if n == 1 && L.Get(-1) == lua.LValue(tplEnv) {
			L.Pop(1)
			L.Push(L.G.Global)
		}
		return n
	}
}

// wrapSetfenv refuses to change the environment of a shared function. A
// level is counted as Lua 5.1 counts it (fenvLevel); level 0 sets the
// coroutine's environment, the state's own.
func wrapSetfenv(tplEnv *lua.LTable, orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		target, ok := fenvLevel(L)
		if !ok {
			target, _ = L.Get(1).(*lua.LFunction)
		}
		if target != nil && target.Env == tplEnv {
			L.RaiseError("setfenv: cannot change the environment of a luarun built-in")
		}
		if !ok {
			return orig(L)
		}
		env := L.CheckTable(2)
		if target.IsG {
			L.RaiseError("cannot change the environment of given object")
		}
		target.Env = env
		L.Push(target)
		return 1
	}
}

// fenvLevel is the function at the level getfenv's or setfenv's first
// argument names, when it is a level above 0, counted as frameAt counts
// (Lua 5.1's levels: tail calls count, a run of built-in frames is one
// level). A level past the stack, or one a tail call replaced, raises
// 5.1's errors.
func fenvLevel(L *lua.LState) (*lua.LFunction, bool) {
	v, ok := L.Get(1).(lua.LNumber)
	if ok && int(v) < 0 {
		L.ArgError(1, "level must be non-negative")
	}
	if !ok || int(v) == 0 {
		return nil, false
	}
	_, f, tail := frameAt(L, int(v))
	if f == nil {
		L.ArgError(1, "invalid level")
	}
	if tail > 0 {
		L.RaiseError("no function environment for tail call at level %d", int(v))
	}
	return f.Fn, true
}

// argTable is the global arg table as the standalone lua makes it: arg[0]
// the script, arg[1..n] the process's arguments; for the luarun command's
// main process, also the command line before the script at arg[-n..-1].
//
// It is made when the process first reads arg (ViewFor): most never
// do, and the table was a sixth of an idle process's memory. A process
// that sets arg to nil before reading it reads the arguments afterwards.
func (p *luaProcess) argTable() *lua.LTable {
	t := p.L.CreateTable(len(p.input), 1)
	t.RawSetInt(0, lua.LString(p.script.name))
	for i, v := range p.input {
		t.RawSetInt(i+1, toLuaValue(p.L, v))
	}
	if p.mainOpts() != nil {
		p.setMainArgs(t) // mainproc.go
	}
	return t
}

// arm (called first by boot, in the root task) makes every error raised
// in the root coroutine record its traceback before the stack unwinds.
func (p *luaProcess) arm(L *lua.LState) int {
	L.Panic = armedPanic
	return 0
}

// armedPanic is the root coroutine's Panic once armed: it records the
// traceback in the coroutine's process (its context's: a function, not
// a closure over the process, so that arming allocates nothing and a
// recycled coroutine keeps no process).
func armedPanic(L *lua.LState) {
	if c, ok := L.Context().(*luaCtx); ok {
		c.p.more().trace = traceback(L, c.p.entryName())
	}
	panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: L.Get(-1)})
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
	p.topLevel, p.entered = false, true
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
	defer p.announceEntry()
	name := entry
	if name == "" {
		name = "main"
	}
	if fn := p.entryNamed(L, module, name); fn != nil {
		L.Push(fn)
		return 1
	}
	if entry == "" {
		if typo := p.misspeltMain(L, module); typo != "" {
			p.more().entryErr = &EntryError{Script: p.script.name, Entry: "main", Entries: p.entryNames(L, module), Misspelt: typo}
			L.RaiseError("%s", p.entryErr.Error())
		}
		p.chunkRun = true
		L.Push(lua.LNil)
		return 1
	}
	p.more().entryErr = &EntryError{Script: p.script.name, Entry: entry, Entries: p.entryNames(L, module)}
	L.RaiseError("%s", p.entryErr.Error())
	return 0
}

// misspeltMain is, for a script without main, the global function whose
// name is one edit from "main" (optcheck.Suggest: mian, Main, mainn) and
// at least as long as "main" ("min" is a word, seldom a typo), if the
// script's code never reads it: a function nothing calls, which the
// program surely meant as its main. "" if there is none: the chunk alone
// is the program, as in Lua. (A table the chunk returns is a module's,
// whose functions are read as fields: its names are not guessed at.)
func (p *luaProcess) misspeltMain(L *lua.LState, module *lua.LTable) string {
	if module != nil {
		return ""
	}
	name := optcheck.Suggest("main", p.entryNames(L, nil))
	if len(name) < len("main") || p.script.proto.ReadsGlobal(name) {
		return ""
	}
	return name
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
	if fn, ok := v.(*lua.LFunction); ok && p.tpl.globals.RawGetString(name) != v {
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
