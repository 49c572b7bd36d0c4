package luaproc

// Recycling the states of finished processes.
//
// A gopher-lua state and its coroutine cost two lua.NewState-sized
// allocations (each with its own unused globals tables); a process that
// returned normally leaves both in a known shape — the root coroutine
// dead with an empty stack, the main state's stack empty — so the next
// process of the same Runtime takes them over with fresh globals.
// States of processes that failed, were killed, or opened io (which keeps
// files in the state) are not reused.

import (
	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/luaproc/lualib"
)

// pooledState is a main state and its root coroutine, ready for reuse.
type pooledState struct {
	L, co *lua.LState
}

// ioOpenedKey marks, in a state's registry, that io was opened in it.
const ioOpenedKey = "luarun.io-opened"

// recycle offers p's state for reuse, if it is clean. It runs in Close.
func (p *luaProcess) recycle() bool {
	if p.L == nil || p.root == nil || p.err != nil || !p.done || p.ctx().Err() != nil {
		return false
	}
	co := p.root.co
	if !co.Dead || currentFrame(co) != nil || len(p.waiting) > 0 {
		return false
	}
	if reg := p.L.G.RegistryIfMade(); reg != nil && reg.RawGetString(ioOpenedKey) != lua.LNil {
		return false
	}
	ps := p.pooled // the holder it came in, if recycled (one allocation less)
	if ps == nil {
		ps = &pooledState{}
	}
	p.pooled = nil
	p.L.G.Views.Maker = nil // the pooled state keeps no process (reusedState resets the rest)
	ps.L, ps.co = p.L, co
	p.rt.states.Put(ps)
	return true
}

// reusedState returns a recycled state, or nil: with its globals and
// views as they are when its last process ran a program of the same
// globals and only read them (lua.ViewSet.Unchanged: kept is true, and
// the new process sees what fresh views would show it, without making
// them again), else with empty globals that setupState binds.
func (rt *Runtime) reusedState(globals, stringMT *lua.LTable) (ps *pooledState, kept bool) {
	ps, _ = rt.states.Get().(*pooledState)
	if ps == nil {
		return nil, false
	}
	L, co := ps.L, ps.co
	lualib.Reset(L) // the last process's random generator is not the next one's
	g, views := L.G.Global, &L.G.Views
	kept = views.Root() == globals && L.Env == g && co.Env == g && views.Unchanged(stringMT)
	if !kept {
		g = L.CreateTable(0, 4)
		L.G.Global, L.Env, co.Env = g, g, g
		views.Reset() // setupState binds g to the shared globals
		// setmetatable(0, mt) and the like set per-type metatables of
		// the state; the next process starts without them (strings' is
		// set anew by setupState).
		L.G.ClearTypeMetatables()
	}
	L.SetTop(0)
	co.SetTop(0)
	co.Dead, co.Parent = false, nil
	if reg := L.G.RegistryIfMade(); reg != nil {
		reg.RawSetString(debugRegistryKey, lua.LNil) // debuglib.go
	}
	L.SetHook(nil) // debug.sethook's (debuglib.go)
	co.SetHook(nil)
	return ps, kept
}
