package luaproc

// The application's modules: commands (Register), Go functions
// (RegisterGoModule) and Lua modules (RegisterLuaModule).
//
// Commands and Go functions make global tables, like the built-in
// modules: every state started after a registration finds them (the
// template is rebuilt), and require returns the same table. Lua modules
// are only found by require (package.loaders[2], require.go), compiled
// once when registered and run once per process that requires them.

import (
	"fmt"
	"slices"
	"strings"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Func is a Go function Lua calls directly (RegisterGoModule). It runs on
// the worker that runs the calling process and must return at once: work
// that waits belongs in a command (Register), which yields instead. It
// takes payload values (deep copies) and returns Go values
// payload.FromGo converts; its results are the Lua call's return values,
// and an error (or a result FromGo refuses) makes the call return nil
// and the error's message. A panic raises a Lua error in the calling
// process.
type Func func(args []any) ([]any, error)

// appModules is what the application registered; guarded by Runtime.mu.
type appModules struct {
	commands map[string][]string        // module → command names (Register)
	funcs    map[string]map[string]Func // module → Go functions
	lua      map[string]*Script         // module name → Lua module
}

// Register makes an application command callable from Lua as
// module.function: Register("db.query", h) gives every process started
// afterwards a global table db with a function query, which require("db")
// also returns. h runs when Lua calls, on the goroutine running the
// calling process, and must return at once, completing c (c.Complete /
// c.Fail) now or later from any goroutine: completed before h returns,
// the call returns at once (as a RegisterGoModule function's would),
// except that after 256 of them in one step the next call yields (a loop
// of them lets the process's other tasks and the other processes run);
// later, the process yields until the completion comes and the others
// run meanwhile. The Lua call returns the completion's values, or nil
// and the error's message. Register commands before
// starting the processes that use them. A command registered already, a
// nil h, and a call after Shutdown (ErrClosed) are errors.
func (rt *Runtime) Register(command string, h Handler) error {
	module, fn, ok := strings.Cut(command, ".")
	if !ok || !payload.IsIdent(module) || !payload.IsIdent(fn) {
		return fmt.Errorf("register %q: a command is named module.function", command)
	}
	if h == nil {
		return fmt.Errorf("register %q: no handler", command)
	}
	rt.mu.Lock()
	err := rt.app.checkGlobal(module, []string{fn})
	if err == nil {
		err = rt.checkOpen()
	}
	if err == nil {
		if rt.app.commands == nil {
			rt.app.commands = map[string][]string{}
		}
		rt.app.commands[module] = append(rt.app.commands[module], fn)
		rt.reg.Register(command, schedulerHandler(h)) // under mu: no other Register of it between
	}
	rt.mu.Unlock()
	if err != nil {
		return fmt.Errorf("register %q: %w", command, err)
	}
	rt.newTemplate()
	return nil
}

// RegisterGoModule makes a module of Go functions: every process started
// afterwards has a global table name with them, which require(name) also
// returns. Lua calls them directly (see Func); they may share a module
// with commands of the same name, but not a function name: a function
// registered already is an error, as is a call after Shutdown (ErrClosed).
func (rt *Runtime) RegisterGoModule(name string, fns map[string]Func) error {
	if !payload.IsIdent(name) {
		return fmt.Errorf("register module %q: a Go module's name is a Lua identifier", name)
	}
	names := make([]string, 0, len(fns))
	for fn, f := range fns {
		if !payload.IsIdent(fn) || f == nil {
			return fmt.Errorf("register module %s: function %q: a Lua identifier and a non-nil Func expected", name, fn)
		}
		names = append(names, fn)
	}
	rt.mu.Lock()
	err := rt.app.checkGlobal(name, names)
	if err == nil {
		err = rt.checkOpen()
	}
	if err == nil {
		if rt.app.funcs == nil {
			rt.app.funcs = map[string]map[string]Func{}
		}
		if rt.app.funcs[name] == nil {
			rt.app.funcs[name] = map[string]Func{}
		}
		for fn, f := range fns {
			rt.app.funcs[name][fn] = f
		}
	}
	rt.mu.Unlock()
	if err != nil {
		return fmt.Errorf("register module %s: %w", name, err)
	}
	rt.newTemplate()
	return nil
}

// RegisterLuaModule makes s the module require(name) finds in every
// process (before package.path's files; package.preload comes first).
// Its chunk runs once per process that requires it, and its result is
// require's value, as for a module file. name may be dotted
// ("app.config"); it must not be a built-in or Go module's name, nor one
// registered already. After Shutdown it is an error (ErrClosed).
func (rt *Runtime) RegisterLuaModule(name string, s *Script) error {
	if name == "" || strings.ContainsAny(name, " \t\n;?") {
		return fmt.Errorf("register module %q: not a module name", name)
	}
	if s == nil {
		return fmt.Errorf("register module %s: no script", name)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if slices.Contains(requirable, name) || rt.app.commands[name] != nil || rt.app.funcs[name] != nil {
		return fmt.Errorf("register module %s: a built-in or Go module has that name", name)
	}
	if rt.app.lua[name] != nil {
		return fmt.Errorf("register module %s: registered already", name)
	}
	if err := rt.checkOpen(); err != nil {
		return fmt.Errorf("register module %s: %w", name, err)
	}
	if rt.app.lua == nil {
		rt.app.lua = map[string]*Script{}
	}
	rt.app.lua[name] = s
	return nil
}

// checkGlobal says whether functions fns may join global module name:
// not a built-in or a Lua module's name, and none of them a Go function
// or command there already.
func (a *appModules) checkGlobal(name string, fns []string) error {
	if slices.Contains(requirable, name) {
		return fmt.Errorf("%s is a built-in module", name)
	}
	if a.lua[name] != nil {
		return fmt.Errorf("%s is a Lua module", name)
	}
	for _, fn := range fns {
		_, isFunc := a.funcs[name][fn]
		isCommand := slices.Contains(a.commands[name], fn)
		if isFunc || isCommand {
			return fmt.Errorf("%s.%s is registered already", name, fn)
		}
	}
	return nil
}

// newTemplate makes the next state get a template with what was just
// registered.
func (rt *Runtime) newTemplate() {
	rt.tplMu.Lock()
	rt.tpl.Store(nil)
	rt.tplMu.Unlock()
}

// globalModules builds the application's global module tables in the
// template state.
func (rt *Runtime) globalModules(L *lua.LState) map[string]*lua.LTable {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := map[string]*lua.LTable{}
	table := func(name string) *lua.LTable {
		if out[name] == nil {
			out[name] = L.CreateTable(0, 4)
		}
		return out[name]
	}
	for module, fns := range rt.app.commands {
		for _, fn := range fns {
			table(module).RawSetString(fn, L.NewFunction(commandFunc(module+"."+fn)))
		}
	}
	for module, fns := range rt.app.funcs {
		for fn, f := range fns {
			table(module).RawSetString(fn, L.NewFunction(goFunc(module+"."+fn, f)))
		}
	}
	return out
}

// luaModule returns the application's Lua module name, and whether the
// application registered any.
func (rt *Runtime) luaModule(name string) (*Script, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.app.lua[name], len(rt.app.lua) > 0
}

// goFunc is the Lua function of a Go module's function.
func goFunc(name string, f Func) lua.LGFunction {
	return func(L *lua.LState) int {
		args := argPayloads(L, 1, name)
		res, err, panicked := callFunc(f, args)
		switch {
		case panicked:
			L.RaiseError("%s: %v", name, err)
		case err != nil:
			L.Push(lua.LNil)
			L.Push(lua.LString(err.Error()))
			return 2
		}
		vs, err := appValues(L, res)
		if err != nil {
			L.Push(lua.LNil)
			L.Push(lua.LString(name + ": " + err.Error()))
			return 2
		}
		for _, v := range vs {
			L.Push(v)
		}
		return len(vs)
	}
}

// callFunc calls f, turning a panic into an error.
func callFunc(f Func, args payload.Payloads) (res payload.Payloads, err error, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			res, err, panicked = nil, &scheduler.PanicError{Where: "Go function", Value: v}, true
		}
	}()
	res, err = f(args)
	return res, err, false
}
