package luaproc

// require and the package table: the Go half of builtin/require.lua.
//
// # Where modules come from
//
// package.loaders holds four searchers, tried in order as Lua 5.1 does
// (a script may add its own):
//
//  1. package.preload[name];
//  2. Lua modules the application registered (RegisterLuaModule);
//  3. files on package.path: each ';'-separated template with '?'
//     replaced by the name, its dots made '/'. The default path is
//     "<dir>/?.lua;<dir>/?/init.lua", <dir> being the program's directory
//     (that of the script its first process ran); Options.LuaPath (the
//     CLI's LUA_PATH) replaces it, ";;" in it standing for the default.
//     Without fs permission a template outside the program's directory
//     is skipped (not even a stat) and listed as not allowed;
//  4. luarun's modules (process, json, fs...) and the application's Go
//     modules (searchBuiltin): a program's own json.lua wins over
//     luarun's json, as a file on the path would in Lua 5.1.
//
// Lua 5.1's libraries (string, table, math, os, io, coroutine, debug,
// package, _G) are never searched for: package.loaded answers them,
// through a shared metatable, with the same table as the global of that
// name; so does it "luarun.<module>" for each of luarun's modules
// (require("luarun.json") is luarun's json whatever the path holds).
//
// # Costs
//
// Nothing of this exists in a process until it first calls require or
// reads package: spawn pays nothing for it. A file is compiled once per
// Runtime (files.go) and run once per process. A process requiring a
// module another process already loaded makes no system call: the path
// the template produced is found in the Runtime's cache (misses on
// earlier templates still stat). A process requiring a file it has loaded
// before (after package.loaded[name] = nil) reads it as it is now, as
// Lua does: one stat, and a compile if it changed.
//
// # Loading, cycles and failures
//
// While a module's chunk runs, package.loaded[name] is LOADING, and the
// process records which coroutine runs it (begin). Requiring a LOADING
// module is then either
//   - a cycle, when that coroutine is the caller's own or one of those
//     that resumed it, or its task waits in process.all for the caller's
//     task: an error naming the chain, "a -> b -> a";
//   - a wait, when another task of the process (process.all) loads it:
//     the caller blocks until that load ends;
//   - a failure, when the load raised an error: the coroutine running it
//     died with the error (failLoads notices every such death: pcall's
//     coroutines, the script's coroutines, tasks). As in Lua 5.1, the
//     module stays failed until the script clears package.loaded[name].

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/luarun/luarun/lua"
)

// loadingMarker is package.loaded[name] while name loads.
var loadingMarker = &lua.LUserData{Value: "luarun.loading", Metatable: lockedMT("luarun.loading")}

// modules is a process's package table and the loads in progress.
type modules struct {
	pkg    *lua.LTable // the package global: a view of the shared defaults (packageTemplate)
	loaded *lua.LTable // package.loaded, as made (require keeps using it)
	// loads: the modules loading, and those that failed (a few at most:
	// a slice, searched by name).
	loads []*moduleLoad
	seq   int // orders loads, for the chain of a cycle
	// files: the module files this process has loaded (a few: a slice);
	// loading one again (after package.loaded[name] = nil) reads it as it
	// is now.
	files []string
}

// packageField returns package[key] as the script left it, for require
// to read (a shared default is not copied into the process).
func (m *modules) packageField(key string) lua.LValue {
	return m.pkg.RawGetStringShared(key)
}

// find returns the load of name, or nil.
func (m *modules) find(name string) *moduleLoad {
	for _, ld := range m.loads {
		if ld.name == name {
			return ld
		}
	}
	return nil
}

// remove forgets the load of name and returns it (nil if none).
func (m *modules) remove(name string) *moduleLoad {
	for i, ld := range m.loads {
		if ld.name == name {
			m.loads = slices.Delete(m.loads, i, i+1)
			return ld
		}
	}
	return nil
}

// moduleLoad is a module whose chunk is running, or raised an error.
type moduleLoad struct {
	name    string
	thread  *lua.LState // the coroutine running the chunk
	task    *task       // the task that coroutine belongs to
	seq     int
	failed  bool
	waiters []*task // tasks blocked in require until it ends
}

// modules returns p's package state, making it on first use. The
// package table and package.loaded are views of shared tables
// (lua/cow.go): a process that only requires pays for two empty tables,
// and copies of preload or loaders only if it reads them.
func (p *luaProcess) modules() *modules {
	if p.mods == nil {
		views := &p.L.G.Views
		p.mods = &modules{} // ViewFor(packageMarker) below asks for it
		p.mods.loaded = views.View(p.tpl.loaded)
		p.mods.pkg = views.View(p.tpl.packageMarker)
	}
	return p.mods
}

// packageTemplate is the shared package table of programs in p's
// directory: package.path's default is theirs.
func (tpl *template) packageTemplate(p *luaProcess) *lua.LTable {
	if t, ok := tpl.packages.Load(p.progDir); ok {
		return t.(*lua.LTable)
	}
	t := p.L.CreateTable(0, 8)
	t.RawSetString("path", p.rt.modulePath(p.progDir))
	t.RawSetString("cpath", emptyString)
	t.RawSetString("config", packageConfig)
	t.RawSetString("loaded", tpl.loaded)
	t.RawSetString("preload", tpl.preload)
	t.RawSetString("loaders", tpl.loaders)
	t.RawSetString("seeall", tpl.seeall)
	t.Share()
	actual, _ := tpl.packages.LoadOrStore(p.progDir, t)
	return actual.(*lua.LTable)
}

var (
	emptyString   lua.LValue = lua.LString("")
	packageConfig lua.LValue = lua.LString("/\n;\n?\n!\n-") // Lua 5.1's package.config
)

// modulePath is the default package.path of a program in progDir, boxed
// once per directory.
func (rt *Runtime) modulePath(progDir string) lua.LValue {
	if v, ok := rt.paths.Load(progDir); ok {
		return v.(lua.LValue)
	}
	dir := progDir
	if dir == "" {
		dir = "."
	}
	def := dir + "/?.lua;" + dir + "/?/init.lua"
	if rt.luaPath != "" {
		def = strings.ReplaceAll(strings.ReplaceAll(rt.luaPath, ";;", ";\x01;"), "\x01", def)
	}
	v, _ := rt.paths.LoadOrStore(progDir, lua.LValue(lua.LString(def)))
	return v.(lua.LValue)
}

// stdLibs are the modules Lua 5.1 has in package.loaded from the start
// (besides _G and package): require answers them before any searcher.
// luarun's own modules and the application's Go modules are found by the
// last searcher instead (searchBuiltin), after the files on package.path,
// so that a program's own json.lua wins over luarun's json; they stay
// reachable as globals and as require("luarun.<name>").
var stdLibs = map[string]bool{
	lua.StringLibName: true, lua.TabLibName: true, lua.MathLibName: true, lua.CoroutineLibName: true,
	lua.OsLibName: true, lua.IoLibName: true, lua.DebugLibName: true,
}

// luarunPrefix names luarun's modules whatever package.path holds:
// require("luarun.json") is luarun's json.
const luarunPrefix = "luarun."

// moduleView is this state's table of built-in module name (its view of
// the shared module, package or io made for the state), or nil when name
// is not one.
func (tpl *template) moduleView(L *lua.LState, name string) lua.LValue {
	if !tpl.isBuiltinModule(name) {
		return lua.LNil
	}
	return L.G.Views.View(tpl.globals.RawGetString(name).(*lua.LTable))
}

// searchBuiltin is package.loaders[4]: luarun's modules and the
// application's Go modules, found after the files on package.path. It
// answers its loader (loadBuiltin), or nothing for another name (5.1's
// list of what was tried stays as 5.1 writes it).
func (p *luaProcess) searchBuiltin(L *lua.LState) int {
	name := L.CheckString(1)
	if !p.tpl.isBuiltinModule(name) || stdLibs[name] {
		return 0
	}
	L.Push(p.tpl.builtinLoader)
	L.Push(lua.LString(name))
	return 2
}

// loadBuiltin is the loader searchBuiltin answers: the module's table
// (the global while it is the module), which require keeps in
// package.loaded.
func (p *luaProcess) loadBuiltin(L *lua.LState) int {
	L.Push(p.tpl.moduleView(L, L.CheckString(1)))
	return 1
}

// requireTables answers require's tables(): package.loaded as made, and
// the current package.loaders.
func (p *luaProcess) requireTables(L *lua.LState) int {
	m := p.modules()
	L.Push(m.loaded)
	// The process's own package.loaders (its view of the shared default,
	// made now: lua/cow.go), never the shared table, which a script could
	// then reach through require's frame. require.lua checks it is a table.
	L.Push(m.pkg.RawGetString("loaders"))
	return 2
}

// requireBegin records that the calling coroutine starts loading name.
func (p *luaProcess) requireBegin(L *lua.LState) int {
	name := L.CheckString(1)
	m := p.modules()
	m.seq++
	if old := m.remove(name); old != nil { // the script cleared loaded[name]
		p.wakeLoadWaiters(old) // they will wait for this load instead
	}
	m.loads = append(m.loads, &moduleLoad{name: name, thread: L, task: p.current, seq: m.seq})
	return 0
}

// requireFinish records that name has loaded.
func (p *luaProcess) requireFinish(L *lua.LState) int {
	name := L.CheckString(1)
	if ld := p.modules().remove(name); ld != nil {
		p.wakeLoadWaiters(ld)
	}
	return 0
}

// requireCheck is called for a module that is LOADING: it returns the
// error to raise, or blocks until another task's load of it has ended
// (then returns nothing, and require looks again).
func (p *luaProcess) requireCheck(L *lua.LState) int {
	name := L.CheckString(1)
	ld := p.modules().find(name)
	switch {
	case ld == nil:
		L.Push(lua.LString("loop or previous error loading module '" + name + "'"))
	case ld.failed:
		L.Push(lua.LString("module '" + name + "' failed to load earlier in this process " +
			"(as in Lua 5.1, a failed module stays failed; set package.loaded[\"" + name + "\"] = nil to load it again)"))
	case p.encloses(L, ld):
		L.Push(lua.LString("require cycle: " + p.cycle(L, ld)))
	case ld.task != p.current && isTask(ld.task.co):
		if p.waitsFor(ld.task, p.current, 0) { // waiting would never end
			L.Push(lua.LString("require cycle: " + p.taskCycle(ld)))
			return 1
		}
		return p.block(L, "require", &request{kind: reqModule, name: name})
	default:
		L.Push(lua.LString("module '" + name + "' is being loaded by a coroutine that is suspended"))
	}
	return 1
}

// raiseAtScript is raise(msg) for require.lua.
func raiseAtScript(L *lua.LState) int {
	raiseAt(L, L.CheckString(1))
	return 0
}

// inChain reports whether th is L or one of the coroutines that resumed
// it and wait for it (gopher-lua clears Parent when a coroutine yields).
func inChain(L, th *lua.LState) bool {
	for c := L; c != nil; c = c.Parent {
		if c == th {
			return true
		}
	}
	return false
}

// encloses reports whether the caller, in coroutine L, runs inside the
// chunk of load ld: ld's coroutine is L or one that resumed L, or ld's
// task waits in process.all for the caller's task (waiting for that load
// would never end).
func (p *luaProcess) encloses(L *lua.LState, ld *moduleLoad) bool {
	if inChain(L, ld.thread) {
		return true
	}
	for t := p.current.parent; t != nil; t = t.parent {
		if t == ld.task {
			return true
		}
	}
	return false
}

// waitsFor reports whether task t waits, directly or through other
// tasks, for task target: for a module load target holds, or in
// process.all for tasks that wait for it.
func (p *luaProcess) waitsFor(t, target *task, depth int) bool {
	if t == target {
		return true
	}
	if depth > 64 {
		return false
	}
	if ld := t.waitingLoad; ld != nil && p.waitsFor(ld.task, target, depth+1) {
		return true
	}
	if t.all == nil {
		return false
	}
	for _, c := range t.all.children {
		if isTask(c.co) && p.waitsFor(c, target, depth+1) {
			return true
		}
	}
	return false
}

// taskCycle names a cycle of loads across tasks, from ld (which the
// current task needs) through the loads the tasks holding them wait for.
func (p *luaProcess) taskCycle(ld *moduleLoad) string {
	names := []string{ld.name}
	for t := ld.task; t.waitingLoad != nil && len(names) < 64; t = t.waitingLoad.task {
		names = append(names, t.waitingLoad.name)
		if t.waitingLoad.task == p.current {
			break
		}
	}
	return strings.Join(append(names, ld.name), " -> ")
}

// cycle names the chain of loads from ld back to ld: "a -> b -> a".
func (p *luaProcess) cycle(L *lua.LState, ld *moduleLoad) string {
	var chain []*moduleLoad
	for _, o := range p.mods.loads {
		if !o.failed && o.seq >= ld.seq && p.encloses(L, o) {
			chain = append(chain, o)
		}
	}
	slices.SortFunc(chain, func(a, b *moduleLoad) int { return a.seq - b.seq })
	names := make([]string, 0, len(chain)+1)
	for _, o := range chain {
		names = append(names, o.name)
	}
	return strings.Join(append(names, ld.name), " -> ")
}

// waitForLoad parks t until the load of name ends (request, reqModule).
func (p *luaProcess) waitForLoad(t *task, name string) {
	if ld := p.mods.find(name); ld != nil && !ld.failed {
		ld.waiters = append(ld.waiters, t)
		t.waitingLoad = ld
		return
	}
	p.ready = append(p.ready, t) // it ended meanwhile
}

func (p *luaProcess) wakeLoadWaiters(ld *moduleLoad) {
	for _, t := range ld.waiters {
		t.waitingLoad = nil
	}
	p.ready = append(p.ready, ld.waiters...)
	ld.waiters = nil
}

// failLoads marks the loads run by th as failed: th died with an error,
// which unwound their chunks.
func (p *luaProcess) failLoads(th *lua.LState) {
	if p.mods == nil || len(p.mods.loads) == 0 {
		return
	}
	for _, ld := range p.mods.loads {
		if ld.thread == th && !ld.failed {
			ld.failed = true
			p.wakeLoadWaiters(ld)
		}
	}
}

// failTaskLoads marks the loads of task t as failed: t has ended, so a
// load it left unfinished (in a coroutine it suspended and dropped, or
// unwound by its error) will not finish unless something resumes that
// coroutine, and nothing must wait for it.
func (p *luaProcess) failTaskLoads(t *task) {
	if p.mods == nil || len(p.mods.loads) == 0 {
		return
	}
	for _, ld := range p.mods.loads {
		if ld.task == t && !ld.failed {
			ld.failed = true
			p.wakeLoadWaiters(ld)
		}
	}
}

// searchPreload is package.loaders[1]: package.preload[name].
func (p *luaProcess) searchPreload(L *lua.LState) int {
	name := L.CheckString(1)
	var v lua.LValue = lua.LNil
	switch preload := p.modules().packageField("preload").(type) {
	case *lua.LTable:
		if preload != p.tpl.preload { // the shared default is empty
			v = L.GetField(preload, name)
		}
	default:
		raiseAt(L, "'package.preload' must be a table")
	}
	if v != lua.LNil {
		L.Push(v)
		return 1
	}
	L.Push(lua.LString("\n\tno field package.preload['" + name + "']"))
	return 1
}

// searchApp is package.loaders[2]: the application's Lua modules.
func (p *luaProcess) searchApp(L *lua.LState) int {
	name := L.CheckString(1)
	s, some := p.rt.luaModule(name)
	switch {
	case s != nil:
		L.Push(p.L.NewFunctionFromProto(s.proto))
		L.Push(lua.LString(s.name))
		return 2
	case some:
		L.Push(lua.LString("\n\tno module '" + name + "' registered by the application"))
		return 1
	}
	return 0
}

// searchFiles is package.loaders[3]: the files on package.path. A file
// that exists but cannot be loaded (a syntax error, or outside the
// program's directory without fs) raises.
func (p *luaProcess) searchFiles(L *lua.LState) int {
	name := L.CheckString(1)
	var path string
	switch v := p.modules().packageField("path").(type) {
	case lua.LString:
		path = string(v)
	default:
		raiseAt(L, "'package.path' must be a string")
	}
	file := strings.ReplaceAll(name, ".", "/")
	var tried strings.Builder
	for rest := path; rest != ""; {
		var tmpl string
		tmpl, rest, _ = strings.Cut(rest, ";")
		if tmpl == "" {
			continue
		}
		cand := strings.ReplaceAll(tmpl, "?", file)
		m := p.modules()
		again := slices.Contains(m.files, cand)
		if s, _ := p.rt.files.cached(cand); s == nil || again {
			if !p.rt.mayTouch(cand, p.progDir) {
				// not even a stat (see mayTouch): skipped, and listed
				tried.WriteString("\n\tnot allowed: " + outsideOrNoDir(cand, p.progDir).Error())
				continue
			}
			if !isFile(cand) {
				tried.WriteString("\n\tno file '" + cand + "'")
				continue
			}
		}
		s, err := p.rt.loadInside(cand, p.progDir, again)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				L.Error(lua.LString(se.Error()), 0) // file:line: message
			}
			raiseAt(L, fmt.Sprintf("module '%s': %v", name, err))
		}
		if !again {
			m.files = append(m.files, cand)
		}
		L.Push(p.L.NewFunctionFromProto(s.proto))
		L.Push(lua.LString(cand))
		return 2
	}
	L.Push(lua.LString(tried.String()))
	return 1
}
