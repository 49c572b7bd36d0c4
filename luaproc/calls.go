package luaproc

// process.call and process.reply, and the down events that end a call.
//
// A call monitors its target for as long as it waits, then sends the
// request as a message whose value is a *callRequest — a Go type only the
// runtime makes, so that nothing a script sends arrives as a call — and
// blocks. The target answers by sending the same request back, replied
// and carrying the reply: one allocation per call, which also holds the
// handle the target's script sees. The call ends with the first of: the
// reply (routed here by intake, never to the mailbox), the monitor's down
// (the target ended first: nil and its reason), or the timeout (nil,
// "timeout"). Then the monitor is removed; a reply that comes later finds
// no call waiting and is dropped and counted (Stats.DroppedReplies); a
// down that comes later finds neither a call nor a monitor and is
// dropped.

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/luarun/luarun/scheduler"
)

// defaultCallTimeout is process.call's timeout when none is given.
const defaultCallTimeout = 5.0

// callRequest is a call on its way to, or waiting in, its target, and
// then its reply on the way back.
type callRequest struct {
	// Written by the caller before it sends the request, read-only after.
	ref    uint64        // the caller's monitor of the target
	from   scheduler.PID // the caller
	msg    any           // the request
	handle lua.LUserData // the target script's handle (callHandle): Value is the request

	// Written by the target (its process, or an Inbox under its mutex)
	// before it sends the request back; the caller reads them after it
	// took the request from its queue, which orders the two.
	replied bool // answered: a request that arrives replied is the reply
	value   any  // the reply
}

// newCallRequest makes the request of a call from from.
func newCallRequest(ref uint64, from scheduler.PID, msg any) *callRequest {
	c := &callRequest{ref: ref, from: from, msg: msg}
	c.handle = lua.LUserData{Value: c, Metatable: callMT}
	return c
}

// pendingCall is a call this process waits on.
type pendingCall struct {
	target scheduler.PID
	task   *task
}

// call is process.call(target, msg [, timeout]).
func (p *luaProcess) call(L *lua.LState) int {
	to, ok := p.target(L, 1)
	msg := L.Get(2)
	if msg == lua.LNil {
		L.ArgError(2, "message must not be nil")
	}
	v, err := messageValue(msg)
	if err != nil {
		L.RaiseError("process.call: %v", err)
	}
	timeout := defaultCallTimeout
	if L.Get(3) != lua.LNil {
		timeout = optTimeout(L, 3)
	}
	if !ok {
		return pushNoProcess(L, L.Get(1))
	}
	ref := p.rt.sched.Monitor(p.pid, to)
	if err := p.sendFromStep(to, newCallRequest(ref, p.pid, v)); err != nil {
		p.rt.sched.Demonitor(to, ref)
		L.Push(lua.LNil)
		L.Push(lua.LString(sendError(to, err)))
		return 2
	}
	if p.calls == nil {
		p.calls = map[uint64]pendingCall{}
	}
	p.calls[ref] = pendingCall{target: to}
	return p.block(L, "process.call", request{kind: reqCall, ref: ref, timeout: timeout})
}

// waitForReply parks t on call ref (request, reqCall).
func (p *luaProcess) waitForReply(t *task, r request) {
	pc := p.calls[r.ref]
	pc.task = t
	p.calls[r.ref] = pc
	t.callRef = r.ref
	if r.timeout > 0 {
		p.setDeadline(t, r.timeout)
	}
}

// endCall ends t's call with args.
func (p *luaProcess) endCall(t *task, args []lua.LValue) {
	pc := p.calls[t.callRef]
	delete(p.calls, t.callRef)
	p.rt.sched.Demonitor(pc.target, t.callRef)
	t.callRef = 0
	p.clearDeadline(t)
	t.args = args
	p.ready = append(p.ready, t)
}

// replied routes a reply to its call, or drops it.
func (p *luaProcess) replied(r *callRequest) {
	pc, ok := p.calls[r.ref]
	if !ok || pc.task == nil {
		p.rt.droppedReplies.Add(1) // its caller gave up
		return
	}
	t := pc.task
	t.argBuf[0] = toLuaValue(p.L, r.value)
	p.endCall(t, t.argBuf[:1])
}

// down files a down event: the end of a call, or of a monitored process.
func (p *luaProcess) down(ev *scheduler.Event) {
	if pc, ok := p.calls[ev.Tag]; ok && pc.task != nil {
		msg := fmt.Sprintf("process %d ended before replying: %s", ev.From, reasonText(ev.Error))
		if ev.Error != nil && reasonText(ev.Error) == "noproc" {
			msg = fmt.Sprintf("no process %d (it does not exist or has ended)", ev.From)
		}
		p.endCall(pc.task, []lua.LValue{lua.LNil, lua.LString(msg)})
		return
	}
	if _, ok := p.monitors[ev.Tag]; !ok {
		return // demonitored: nothing is delivered afterwards
	}
	delete(p.monitors, ev.Tag)
	p.mailbox.push(message{from: ev.From, kind: kindDown, ref: ev.Tag, value: reasonValue(ev.Error)})
}

// callMT marks call handles (process.reply's first argument).
var callMT = lockedMT("luarun.call")

// callHandle is the Lua value of a call's handle: a userdata only the
// runtime makes.
func (p *luaProcess) callHandle(c *callRequest) lua.LValue { return &c.handle }

// reply is process.reply(call, value).
func (p *luaProcess) reply(L *lua.LState) int {
	ud, ok := L.Get(1).(*lua.LUserData)
	var c *callRequest
	if ok {
		c, ok = ud.Value.(*callRequest)
	}
	if !ok {
		L.ArgError(1, "a call expected (the fourth value receive returns for a call)")
	}
	if c.replied {
		L.RaiseError("process.reply: this call has been answered already")
	}
	v, err := messageValue(L.Get(2))
	if err != nil {
		L.RaiseError("process.reply: %v", err)
	}
	c.replied, c.value = true, v
	if err := p.sendFromStep(c.from, c); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(sendError(c.from, err)))
		return 2
	}
	L.Push(lua.LTrue)
	return 1
}

// sendFromStep sends from this process (through its step when in one).
func (p *luaProcess) sendFromStep(to scheduler.PID, v any) error {
	if p.out != nil {
		return p.out.Send(to, v)
	}
	return p.rt.sched.Send(p.pid, to, v)
}
