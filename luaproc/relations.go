package luaproc

// process.monitor, demonitor, link, unlink, trap_exits, spawn_link,
// spawn_monitor, register, unregister, whereis, send_after and
// cancel_timer: Lua's side of the scheduler's links, monitors and names
// (scheduler/links.go, names.go).

import (
	"fmt"
	"sync/atomic"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/luaproc/lualib"
	"github.com/luarun/luarun/scheduler"
)

// target reads argument n as a process: a PID, or a registered name
// (false when no process holds it: like an ended PID).
func (p *luaProcess) target(L *lua.LState, n int) (scheduler.PID, bool) {
	switch v := L.Get(n).(type) {
	case lua.LNumber: // checkPID's test, without reading the argument again
		if f := float64(v); f >= 1 && f == float64(int64(f)) {
			return scheduler.PID(f), true
		}
	case lua.LString:
		if v == "" {
			L.ArgError(n, "a PID or a name expected, got an empty name")
		}
		return p.rt.whereis(string(v))
	}
	return checkPID(L, n), true
}

// pushNoProcess returns nil and the error of a target that is not there.
func pushNoProcess(L *lua.LState, target lua.LValue) int {
	L.Push(lua.LNil)
	if name, ok := target.(lua.LString); ok {
		L.Push(lua.LString(fmt.Sprintf("no process registered as %q", string(name))))
	} else {
		L.Push(lua.LString(fmt.Sprintf("no process %s (it does not exist or has ended)", target.String())))
	}
	return 2
}

// monitor is process.monitor(target): a reference; the down comes when
// target ends (at once, with "noproc", if it has or is not there).
func (p *luaProcess) monitor(L *lua.LState) int {
	to, ok := p.target(L, 1)
	if !ok {
		to = 0 // no such process: the down says noproc
	}
	ref := p.rt.sched.Monitor(p.pid, to)
	if p.more().monitors == nil {
		p.monitors = map[uint64]scheduler.PID{}
	}
	p.monitors[ref] = to
	L.Push(lua.LNumber(ref))
	return 1
}

// demonitor is process.demonitor(ref): no down for ref is received after
// it returns, even one already on its way (down drops it).
//
// It returns true if it took a monitor back: one still waiting, or one
// whose down it took out of the mailbox.
func (p *luaProcess) demonitor(L *lua.LState) int {
	ref := uint64(L.CheckNumber(1))
	var to scheduler.PID
	ok := false
	if p.procMore != nil {
		to, ok = p.monitors[ref]
	}
	if ok {
		delete(p.monitors, ref)
		p.rt.sched.Demonitor(to, ref)
	}
	L.Push(lua.LBool(p.dropDown(ref) || ok))
	return 1
}

// dropDown removes a down of ref already in the mailbox.
func (p *luaProcess) dropDown(ref uint64) bool {
	for i := 0; i < p.mailbox.len(); i++ {
		m := p.mailbox.at(i)
		if m.kind == kindDown && m.ref == ref {
			p.take(i)
			return true
		}
	}
	return false
}

// link is process.link(target): true; an exit comes at once if target is
// not there.
func (p *luaProcess) link(L *lua.LState) int {
	to, ok := p.target(L, 1)
	if !ok {
		to = 0
	}
	if err := p.rt.sched.Link(p.pid, to); err != nil {
		L.RaiseError("process.link: %v", err)
	}
	L.Push(lua.LTrue)
	return 1
}

// unlink is process.unlink(target).
func (p *luaProcess) unlink(L *lua.LState) int {
	if to, ok := p.target(L, 1); ok {
		p.rt.sched.Unlink(p.pid, to)
	}
	L.Push(lua.LTrue)
	return 1
}

// trapExits is process.trap_exits(on): the previous setting.
func (p *luaProcess) trapExits(L *lua.LState) int {
	on := L.CheckBool(1)
	L.Push(lua.LBool(p.trapping.Swap(on)))
	return 1
}

// TrapsShutdown implements scheduler.ShutdownTrapper: a process that
// traps exits takes the shutdown as an exit event and keeps running.
func (p *luaProcess) TrapsShutdown() bool { return p.trapping.Load() }

// spawnLink is process.spawn_link(entry, ...): the PID.
func (p *luaProcess) spawnLink(L *lua.LState) int {
	return p.spawnRelated(L, "process.spawn_link", scheduler.SubmitOptions{Link: p.pid})
}

// spawnMonitor is process.spawn_monitor(entry, ...): the PID and the
// monitor's reference.
func (p *luaProcess) spawnMonitor(L *lua.LState) int {
	return p.spawnRelated(L, "process.spawn_monitor", scheduler.SubmitOptions{Monitor: p.pid})
}

func (p *luaProcess) spawnRelated(L *lua.LState, fn string, opts scheduler.SubmitOptions) int {
	p.checkTopLevel(L, fn)
	entry := L.CheckString(1)
	args := spawnArgs(L, 2, fn)
	n, ref := p.startWith(L, p.script, entry, args, opts)
	if n == 1 && opts.Monitor != 0 {
		if p.more().monitors == nil {
			p.monitors = map[uint64]scheduler.PID{}
		}
		p.monitors[ref] = scheduler.PID(L.Get(-1).(lua.LNumber))
		L.Push(lua.LNumber(ref))
		return 2
	}
	return n
}

// register is process.register(name [, pid]).
func (p *luaProcess) register(L *lua.LState) int {
	name := L.CheckString(1)
	if name == "" {
		L.ArgError(1, "a name must not be empty")
	}
	pid := p.pid
	if L.Get(2) != lua.LNil {
		pid = checkPID(L, 2)
	}
	if err := p.rt.sched.Register(name, pid); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	if p.rt.cluster != nil { // and in the whole cluster: a round trip (cluster.go)
		return p.block(L, "process.register", &request{kind: reqCommand, name: registerCommand, args: []any{name, pid}})
	}
	L.Push(lua.LTrue)
	return 1
}

// unregister is process.unregister(name): whether a process held it.
func (p *luaProcess) unregister(L *lua.LState) int {
	L.Push(lua.LBool(p.rt.sched.Unregister(L.CheckString(1))))
	return 1
}

// whereis is process.whereis(name): the PID, or nil.
func (p *luaProcess) whereis(L *lua.LState) int {
	if pid, ok := p.rt.whereis(L.CheckString(1)); ok {
		L.Push(lua.LNumber(pid))
	} else {
		L.Push(lua.LNil)
	}
	return 1
}

// sendTimer is a timer of send_after.
type sendTimer struct {
	t     *time.Timer
	fired atomic.Bool
}

// sendAfter is process.send_after(seconds, target, msg): a timer id. The
// message goes when the timer fires, as if this process sent it then (a
// name is looked up then); nothing waits for it meanwhile (a runtime
// timer, no goroutine).
func (p *luaProcess) sendAfter(L *lua.LState) int {
	d := float64(L.CheckNumber(1))
	target := L.Get(2)
	if _, ok := target.(lua.LString); !ok {
		checkPID(L, 2)
	}
	msg := L.Get(3)
	if msg == lua.LNil {
		L.ArgError(3, "message must not be nil")
	}
	v, err := messageValue(msg)
	if err != nil {
		L.RaiseError("process.send_after: %v", err)
	}
	if d != d {
		L.ArgError(1, "seconds is not a number (NaN)")
	}
	st := &sendTimer{}
	sched, from, rt := p.rt.sched, p.pid, p.rt
	st.t = time.AfterFunc(secondsDuration(d), func() {
		st.fired.Store(true)
		to, ok := scheduler.PID(0), true
		switch x := target.(type) {
		case lua.LString:
			to, ok = rt.whereis(string(x))
		case lua.LNumber:
			to = scheduler.PID(x)
		}
		if ok {
			msg := v
			if rt.remote(to) {
				msg = goValue(v) // a scalar crosses the wire as a payload value (cluster.go)
			}
			sched.Send(from, to, msg)
		}
	})
	p.more().timerID++
	if p.timers == nil {
		p.timers = map[int64]*sendTimer{}
	}
	p.pruneTimers()
	p.timers[p.timerID] = st
	L.Push(lua.LNumber(p.timerID))
	return 1
}

// pruneTimers forgets fired timers once they are as many as the ones
// kept: a process that sends itself ticks forever keeps a bounded map.
func (p *luaProcess) pruneTimers() {
	if len(p.timers) < 64 || len(p.timers) < 2*p.timersKept {
		return
	}
	for id, st := range p.timers {
		if st.fired.Load() {
			delete(p.timers, id)
		}
	}
	p.timersKept = len(p.timers)
}

// cancelTimer is process.cancel_timer(id): true if the timer was
// cancelled before it fired.
func (p *luaProcess) cancelTimer(L *lua.LState) int {
	id := int64(L.CheckNumber(1))
	var st *sendTimer
	ok := false
	if p.procMore != nil {
		st, ok = p.timers[id]
	}
	if ok {
		delete(p.timers, id)
		ok = st.t.Stop()
	}
	L.Push(lua.LBool(ok))
	return 1
}

// secondsDuration converts seconds (not NaN) to a Duration: at least 0,
// at most the largest.
func secondsDuration(s float64) time.Duration {
	switch {
	case s <= 0:
		return 0
	case s >= maxTimeout:
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(s * float64(time.Second))
}

// supervisorEntry is the entry of a supervisor process: resolve runs
// supervisor.lua's supervise for it, whatever the script defines.
const supervisorEntry = "\x00supervise"

// loadSupervisor runs supervisor.lua in the template state and returns
// the module's table; its supervise function becomes tpl.supervise.
func (tpl *template) loadSupervisor(L *lua.LState, processT *lua.LTable, spawn *lua.LFunction) *lua.LTable {
	L.Push(L.NewFunctionFromProto(builtinProto("supervisor")))
	L.Push(processT)
	L.Push(spawn)
	L.Push(L.NewFunction(unknownOption))
	L.Call(3, 1)
	m := L.Get(-1).(*lua.LTable)
	L.Pop(1)
	tpl.supervise = m.RawGetString("supervise").(*lua.LFunction)
	m.RawSetString("supervise", lua.LNil) // not the script's to call
	return m
}

// supervisorInChunk is the error of supervisor.start called while the
// script's top level runs. The supervisor is a process of the script: it
// runs the top level again before its children start, which would call
// supervisor.start again, and so on — so it is refused, naming the entry
// point that should call it (the one this process will run, main by
// default, which a script without main lacks).
func (p *luaProcess) supervisorInChunk(L *lua.LState) string {
	entry := p.entry
	if entry == "" {
		entry = "main"
	}
	msg := fmt.Sprintf("supervisor.start: called from the top level of %s, which the supervisor's process runs again; call it from %s", p.script.name, entry)
	if p.entryNamed(L, nil, entry) == nil {
		msg += fmt.Sprintf(" (the script defines no function %s: define function %s() and start the supervisor there)", entry, entry)
	}
	return msg
}

// unknownOption is supervisor.lua's and pool.lua's unknown_option(t,
// known...): the
// message of lualib.CheckOptions for table t, or nil if every key of t
// is one of known (the Lua side raises it at the caller's level).
func unknownOption(L *lua.LState) int {
	t := L.CheckTable(1)
	known := make([]string, 0, L.GetTop()-1)
	for i := 2; i <= L.GetTop(); i++ {
		known = append(known, L.CheckString(i))
	}
	if err := lualib.CheckOptions(t, known...); err != nil {
		L.Push(lua.LString(err.Error()))
		return 1
	}
	return 0
}

// spawnSupervisor is supervisor.lua's spawn_supervisor(spec, link): a
// process of this script running the supervisor, with spec as its
// argument, linked to this one if link.
func (p *luaProcess) spawnSupervisor(L *lua.LState) int {
	if !p.entered {
		L.Error(lua.LString(p.supervisorInChunk(L)), 2) // at the script's line, not supervisor.lua's
	}
	spec, err := toPayload(L.CheckTable(1), "spec")
	if err != nil {
		L.RaiseError("supervisor.start: %v", err)
	}
	var opts scheduler.SubmitOptions
	if L.ToBool(2) {
		opts.Link = p.pid
	}
	n, _ := p.startWith(L, p.script, supervisorEntry, []any{spec}, opts)
	return n
}
