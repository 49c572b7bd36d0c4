package luaproc

// The luarun modules every process gets: process, time, log, json, and
// the application's commands. Calls that cannot block (self, spawn, send,
// kill, now, log, json) are plain Go functions; blocking ones go through
// Process.block.

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Module functions are shared by every state of a Runtime (state.go);
// each finds its process through the calling coroutine's context.
var (
	processFuncs = map[string]lua.LGFunction{
		"self":       bind((*luaProcess).self),
		"spawn":      bind((*luaProcess).spawn),
		"spawn_file": bind((*luaProcess).spawnFile),
		"spawn_on":   bind((*luaProcess).spawnOn),
		"send":       luaSend,
		"receive":    luaReceive,
		"wait":       bind((*luaProcess).wait),
		"kill":       bind((*luaProcess).kill),
		"sleep":      bind((*luaProcess).sleep),
		// failure handling (relations.go, calls.go)
		"monitor":       bind((*luaProcess).monitor),
		"demonitor":     bind((*luaProcess).demonitor),
		"link":          bind((*luaProcess).link),
		"unlink":        bind((*luaProcess).unlink),
		"trap_exits":    bind((*luaProcess).trapExits),
		"spawn_link":    bind((*luaProcess).spawnLink),
		"spawn_monitor": bind((*luaProcess).spawnMonitor),
		"register":      bind((*luaProcess).register),
		"unregister":    bind((*luaProcess).unregister),
		"whereis":       bind((*luaProcess).whereis),
		"call":          luaCall,
		"reply":         luaReply,
		"send_after":    bind((*luaProcess).sendAfter),
		"cancel_timer":  bind((*luaProcess).cancelTimer),
		// several machines (cluster.go)
		"node":  bind((*luaProcess).node),
		"nodes": bind((*luaProcess).nodes),
		// "all" is set by prelude.lua
	}
	timeFuncs = map[string]lua.LGFunction{
		"sleep":     bind((*luaProcess).sleep),
		"now":       timeNow,
		"monotonic": bind((*luaProcess).monotonic),
	}
	logFuncs = map[string]lua.LGFunction{
		"debug": logAt(slog.LevelDebug),
		"info":  logAt(slog.LevelInfo),
		"warn":  logAt(slog.LevelWarn),
		"error": logAt(slog.LevelError),
	}
)

func moduleTable(L *lua.LState, fns map[string]lua.LGFunction) *lua.LTable {
	t := L.CreateTable(0, len(fns))
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bind makes a shared Lua function of a process method.
func bind(m func(*luaProcess, *lua.LState) int) lua.LGFunction {
	return func(L *lua.LState) int { return m(procOf(L), L) }
}

// luaSend, luaReceive, luaCall and luaReply are what bind makes of send,
// receive, call and reply, the calls of every message and request,
// without its indirect call.
func luaSend(L *lua.LState) int    { return procOf(L).send(L) }
func luaReceive(L *lua.LState) int { return procOf(L).receive(L) }
func luaCall(L *lua.LState) int    { return procOf(L).call(L) }
func luaReply(L *lua.LState) int   { return procOf(L).reply(L) }

// procOf returns the process whose coroutine L is: our coroutines carry a
// *luaCtx, and coroutines a script makes carry a child of one.
func procOf(L *lua.LState) *luaProcess {
	if c, ok := L.Context().(*luaCtx); ok { // small enough to inline
		return c.p
	}
	return procOfChild(L)
}

// procOfChild is procOf for a coroutine a script made.
func procOfChild(L *lua.LState) *luaProcess {
	if ctx := L.Context(); ctx != nil {
		if p, ok := ctx.Value(procKey{}).(*luaProcess); ok {
			return p
		}
	}
	L.RaiseError("luarun: this function runs only inside a process")
	return nil
}

func (p *luaProcess) self(L *lua.LState) int {
	L.Push(lua.LNumber(p.pid))
	return 1
}

// argPayloads converts the arguments from position first on.
func argPayloads(L *lua.LState, first int, fn string) payload.Payloads {
	return convertArgs(L, first, fn, toPayload)
}

// spawnArgs is argPayloads for a local spawn: sockets' handles move to
// the new process (serving.go).
func spawnArgs(L *lua.LState, first int, fn string) payload.Payloads {
	return convertArgs(L, first, fn, toMoved)
}

// argPaths are the first arguments' names in conversion errors, made
// once: a command's call would otherwise make one per argument.
var argPaths = [...]string{"arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8"}

// argPath names argument i (from 0) in a conversion error.
func argPath(i int) string {
	if i < len(argPaths) {
		return argPaths[i]
	}
	return "arg" + strconv.Itoa(i+1)
}

func convertArgs(L *lua.LState, first int, fn string, conv func(lua.LValue, string) (any, error)) payload.Payloads {
	n := L.GetTop() - first + 1
	if n <= 0 {
		return nil
	}
	out := make(payload.Payloads, n)
	for i := range n {
		v, err := conv(L.Get(first+i), argPath(i))
		if err != nil {
			L.RaiseError("%s: %v", fn, err)
		}
		out[i] = v
	}
	return out
}

func (p *luaProcess) spawn(L *lua.LState) int {
	p.checkTopLevel(L, "process.spawn")
	entry := L.CheckString(1)
	args := spawnArgs(L, 2, "process.spawn")
	return p.start(L, p.script, entry, args)
}

func (p *luaProcess) spawnFile(L *lua.LState) int {
	p.checkTopLevel(L, "process.spawn_file")
	path := L.CheckString(1)
	entry := L.OptString(2, "")
	args := spawnArgs(L, 3, "process.spawn_file")
	s, err := p.rt.loadRelative(path, p.script.dir, p.progDir)
	if err != nil {
		L.RaiseError("process.spawn_file: %v", err)
	}
	return p.start(L, s, entry, args)
}

// checkTopLevel refuses a spawn from the top level of a process spawned
// with a named entry. Every process runs its script's chunk before its
// entry point, so a chunk that spawns a process of its own script would
// spawn again in that process, and so on without end.
func (p *luaProcess) checkTopLevel(L *lua.LState, fn string) {
	if p.topLevel {
		L.RaiseError("%s: spawning belongs in main or another entry, not at the top level of a script: "+
			"every spawned process runs the top level again (as module initialisation) before its entry", fn)
	}
}

// start spawns a process running entry of s. An entry the script is
// known not to have (its chunk has run once: resolve) is nil, err.
func (p *luaProcess) start(L *lua.LState, s *Script, entry string, args payload.Payloads) int {
	n, _ := p.startWith(L, s, entry, args, scheduler.SubmitOptions{})
	return n
}

// startWith is start, linking or monitoring the child as opts say; it
// also returns the monitor's reference.
func (p *luaProcess) startWith(L *lua.LState, s *Script, entry string, args payload.Payloads, opts scheduler.SubmitOptions) (int, uint64) {
	if entries := s.entries.Load(); entries != nil && entry != "" && entry != supervisorEntry && !slices.Contains(*entries, entry) {
		L.Push(lua.LNil)
		L.Push(lua.LString((&EntryError{Script: s.name, Entry: entry, Entries: *entries}).Error()))
		return 2, 0
	}
	child := p.rt.newProcess(s)
	child.progDir = p.progDir
	// A child with a named entry runs the script's chunk as module
	// initialisation (checkTopLevel); one without (spawn_file with no
	// entry) may have no main, and then its chunk is its program.
	child.topLevel = entry != ""
	var h scheduler.Handle
	var ref uint64
	var err error
	if p.out != nil {
		h, ref, err = p.out.SpawnWith(child, entry, args, opts)
	} else {
		h, ref, err = p.rt.sched.SubmitWith(child, entry, args, opts)
	}
	if err != nil {
		if msg, ok := spawnError(err); ok {
			L.Push(lua.LNil)
			L.Push(lua.LString(msg))
			return 2, 0
		}
		L.RaiseError("process.spawn: %v", err)
	}
	p.more().children.add(h)
	L.Push(lua.LNumber(h.PID()))
	return 1, ref
}

func checkPID(L *lua.LState, n int) scheduler.PID {
	f := float64(L.CheckNumber(n))
	if f < 1 || f != float64(int64(f)) {
		L.ArgError(n, "a PID expected")
	}
	return scheduler.PID(f)
}

func (p *luaProcess) send(L *lua.LState) int {
	to, found := p.target(L, 1)
	msg := L.Get(2)
	if msg == lua.LNil {
		L.ArgError(2, "message must not be nil")
	}
	v, err := messageValue(msg)
	if err != nil {
		L.RaiseError("process.send: %v", err)
	}
	if !found {
		return pushNoProcess(L, L.Get(1))
	}
	if to == p.pid && p.out != nil {
		return p.sendToSelf(L, v)
	}
	if p.rt.remote(to) {
		v = goValue(v) // a scalar crosses the wire as a payload value
	}
	if p.out != nil {
		err = p.out.Send(to, v)
	} else {
		err = p.rt.sched.Send(p.pid, to, v)
	}
	if err != nil {
		L.Push(lua.LNil)
		if err == scheduler.ErrMailboxFull {
			L.Push(mailboxFull)
		} else {
			L.Push(lua.LString(sendError(to, err)))
		}
		return 2
	}
	L.Push(lua.LTrue)
	return 1
}

// sendToSelf files a message the process sends itself straight into its
// mailbox, so that a receive later in the same step takes it: through
// the scheduler it would come with the next step, and receive(0) right
// after the send missed it. The mailbox bound is checked against what
// the process holds; the scheduler counts the message after the step,
// with the others it holds unread (StepOutput.Backlog).
func (p *luaProcess) sendToSelf(L *lua.LState, v any) int {
	if limit := p.rt.maxMailbox; limit > 0 && p.mailbox.sent >= limit {
		L.Push(lua.LNil)
		L.Push(mailboxFull)
		return 2
	}
	p.mailbox.push(message{from: p.pid, value: v})
	L.Push(lua.LTrue)
	return 1
}

// mailboxFull is process.send's error for a full mailbox, boxed once: a
// flood meets it millions of times.
var mailboxFull lua.LValue = lua.LString("mailbox full")

// messageValue is what a message carries between processes. A number,
// string or boolean travels as the Lua value itself: those are immutable,
// so sharing them between states is safe, and the receiver gets the
// value the sender already had boxed — a scalar message allocates
// nothing. Everything else is converted to a payload value (a deep copy).
// Only Lua processes and Inboxes receive messages; an Inbox converts the
// scalars to payload values (goValue).
func messageValue(v lua.LValue) (any, error) {
	switch v.(type) {
	case lua.LNumber, lua.LString, lua.LBool:
		return v, nil
	}
	return toMoved(v, "msg")
}

// goValue turns a message value into a payload value.
func goValue(v any) any {
	switch x := v.(type) {
	case lua.LNumber:
		return numberToGo(float64(x))
	case lua.LString:
		s, _ := lua.GoStringOf(v) // shares v's header: string(x) would box it again
		return s
	case lua.LBool:
		return bool(x)
	}
	return v
}

func sendError(to scheduler.PID, err error) string {
	switch {
	case errors.Is(err, scheduler.ErrNoProcess):
		return fmt.Sprintf("no process %d (it does not exist or has ended)", to)
	case errors.Is(err, scheduler.ErrMailboxFull):
		return "mailbox full"
	}
	return err.Error()
}

// spawnError is the message of a spawn the scheduler refused.
func spawnError(err error) (string, bool) {
	switch {
	case errors.Is(err, scheduler.ErrTooManyProcesses):
		return "process limit reached (see --max-procs, Options.MaxProcs)", true
	case errors.Is(err, scheduler.ErrClosed):
		return "the runtime is shutting down", true
	}
	return "", false
}

// optTimeout reads an optional timeout in seconds at n: -1 when absent.
func optTimeout(L *lua.LState, n int) float64 {
	if _, none := L.Get(n).(*lua.LNilType); none { // not == LNil: that calls ifaceeq
		return -1
	}
	d := float64(L.CheckNumber(n))
	switch {
	case d != d:
		L.ArgError(n, "timeout is not a number (NaN)")
	case d < 0:
		d = 0
	case d >= maxTimeout: // math.huge and the like: no timer at all
		d = -1
	}
	return d
}

// maxTimeout is the first number of seconds a time.Duration cannot hold.
const maxTimeout = float64(math.MaxInt64 / int64(time.Second))

func (p *luaProcess) wait(L *lua.LState) int {
	p.notInMatch(L, "process.wait")
	pid := checkPID(L, 1)
	timeout := optTimeout(L, 2)
	if p.rt.remote(pid) {
		return p.waitRemote(L, pid, timeout)
	}
	var h scheduler.Handle
	child := false
	if p.procMore != nil {
		h, child = p.children.get(pid)
	}
	if !child {
		var ok bool
		if h, ok = p.rt.sched.Lookup(pid); !ok {
			L.Push(lua.LFalse)
			L.Push(lua.LString(fmt.Sprintf("no process %d (it does not exist, or ended and was not spawned by this process)", pid)))
			return 2
		}
	}
	select {
	case <-h.Done(): // ended: no need to block
		if child {
			p.children.remove(pid) // its result is handed over now
		}
		vals := p.resultValues(commands.WaitResult(h), nil)
		for _, v := range vals {
			L.Push(v)
		}
		return len(vals)
	default:
	}
	if timeout == 0 {
		L.Push(lua.LNil)
		L.Push(lua.LString("timeout"))
		return 2
	}
	return p.block(L, "process.wait", &request{kind: reqCommand, name: "process.wait", args: []any{h, timeout}})
}

func (p *luaProcess) kill(L *lua.LState) int {
	pid := checkPID(L, 1)
	reason := L.OptString(2, "")
	if err := p.rt.sched.Kill(pid, &KilledError{Reason: reason}); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(sendError(pid, err)))
		return 2
	}
	L.Push(lua.LTrue)
	return 1
}

// all is process.all's Go half (prelude.lua raises its error).
func (p *luaProcess) all(L *lua.LState) int {
	n := L.GetTop()
	fns := make([]*lua.LFunction, n)
	for i := range n {
		fns[i] = L.CheckFunction(i + 1)
	}
	return p.block(L, "process.all", &request{kind: reqAll, fns: fns})
}

func timeNow(L *lua.LState) int {
	L.Push(lua.LNumber(float64(time.Now().UnixNano()) / 1e9))
	return 1
}

func (p *luaProcess) monotonic(L *lua.LState) int {
	L.Push(lua.LNumber(time.Since(p.rt.started).Seconds()))
	return 1
}

func (p *luaProcess) sleep(L *lua.LState) int {
	p.notInMatch(L, "time.sleep")
	d := float64(L.CheckNumber(1))
	switch {
	case d != d:
		L.ArgError(1, "seconds is not a number (NaN)")
	case d < 0:
		d = 0
	}
	return p.block(L, "time.sleep", &request{kind: reqCommand, yields: true, name: "time.sleep", args: []any{d}})
}

// commandFunc makes the Lua function of an application command: its
// arguments become the call's payload, its result the Lua return values.
func commandFunc(name string) lua.LGFunction {
	return func(L *lua.LState) int {
		p := procOf(L)
		args := argPayloads(L, 1, name)
		return p.block(L, name, &request{kind: reqCommand, name: name, args: args})
	}
}

// checkedCommandFunc is commandFunc for a built-in I/O command: bad
// arguments raise here, before the yield, as misuse does in Lua ("fs.read:
// argument 1: string expected, got table"); only failures of the I/O
// itself come back as nil, err.
func checkedCommandFunc(name string) lua.LGFunction {
	return func(L *lua.LState) int {
		p := procOf(L)
		args := argPayloads(L, 1, name)
		if err := commands.CheckArgs(name, args); err != nil {
			L.RaiseError("%s: %v", name, err)
		}
		return p.block(L, name, &request{kind: reqCommand, name: name, args: args})
	}
}

func logAt(level slog.Level) lua.LGFunction {
	return func(L *lua.LState) int {
		p := procOf(L)
		msg := logText(logString(L, L.Get(1)))
		kv := make([]any, 0, 2+L.GetTop())
		kv = append(kv, "pid", int64(p.pid))
		for i := 2; i <= L.GetTop(); i++ {
			v := L.Get(i)
			if i%2 == 0 { // a key: never one of the logger's own (logKey)
				kv = append(kv, logKey(logString(L, v)))
				continue
			}
			switch x := v.(type) {
			case *lua.LNilType:
				kv = append(kv, nil)
			case lua.LBool:
				kv = append(kv, bool(x))
			case lua.LNumber: // a JSON number
				n, _ := toPayload(x, "value")
				kv = append(kv, n)
			default: // logrender.go
				kv = append(kv, logText(logString(L, v)))
			}
		}
		if len(kv)%2 == 1 {
			kv = append(kv, nil)
		}
		p.rt.logger.Log(p.ctx(), level, msg, kv...)
		return 0
	}
}

// print writes its arguments as one line, in one write, so lines from
// different processes never interleave; each goes through the global
// tostring, as in Lua 5.1 (lua.PrintLine).
func (rt *Runtime) print(L *lua.LState) int {
	rt.writeOut(lua.PrintLine(L))
	return 0
}
