package luaproc

// process.call and process.reply, and the down events that end a call.
//
// A call sends the request as a message whose value is a *callRequest —
// a Go type only the runtime makes, so that nothing a script sends
// arrives as a call — and blocks. The target answers by sending the same
// request back, replied and carrying the reply: one allocation per call,
// which also holds the handle the target's script sees. The call ends
// with the first of: the reply (routed here by intake, never to the
// mailbox), the target's end (nil and its reason), or the timeout (nil,
// "timeout"). A reply that comes after its call ended finds its task
// waiting on another call, or none, and is dropped and counted
// (Stats.DroppedReplies).
//
// To hear of the target's end, a process monitors each target it calls
// and keeps the monitor between calls (callMonitor): a client calling one
// server a million times monitors it once, rather than taking the
// server's relations mutex twice a call, which every client on every
// worker would contend for. The monitor is quiet
// (Scheduler.MonitorQuietly): calling a process does not count as
// watching it, so its failure is still reported. When a process holds
// maxCallMonitors and needs one more, it drops those with no call
// waiting (their targets are monitored again on their next call); all are
// removed when it ends (Close). The price: a target that ends after its
// calls were answered still sends each caller that kept its monitor a
// down, which the caller drops.
//
// A call to a process of another node cannot carry the request's
// pointer: the caller numbers the call, keeps the request under that
// number (remoteCalls) and sends a scheduler.RemoteCall; the target's
// runtime makes a request of its own (remoteID set), whose reply goes
// back as a RemoteCall with the number, and the caller's intake finds the
// request by it. The monitor is the same, across nodes (a node that goes
// away ends the call with "noconnection").
//
// Invariants (the process's goroutine only):
//   - a task blocked in a call has t.call set, the request's task is t,
//     and t is in the waiting list of callMons[the request's target];
//   - a down whose ref is callMons[From].ref ends every call waiting on
//     From and removes the entry; any other down is a script's monitor
//     (relations.go) or stale, and is dropped if the script does not hold
//     it.

import (
	"errors"
	"fmt"
	"slices"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
)

// defaultCallTimeout is process.call's timeout when none is given.
const defaultCallTimeout = 5.0

// maxCallMonitors is how many call monitors a process holds before it
// drops the idle ones (callMonitor).
const maxCallMonitors = 64

// callRequest is a call on its way to, or waiting in, its target, and
// then its reply on the way back.
type callRequest struct {
	// Written by the caller before it sends the request, read-only after.
	from   scheduler.PID // the caller
	msg    any           // the request
	handle lua.LUserData // the target script's handle (callHandle): Value is the request
	// The caller's only: a Lua caller's task (cleared when the call ends,
	// even though the target may still hold the request) and the target,
	// or an Inbox's monitor of the target (the key of its calls).
	task *task
	to   scheduler.PID
	ref  uint64
	id   uint64 // a call to another node: its number in remoteCalls

	// remoteID: a call from another node, by its caller's number; the
	// reply goes back as a RemoteCall. Set when it arrives.
	remoteID uint64

	// Written by the target (its process, or an Inbox under its mutex)
	// before it sends the request back; the caller reads them after it
	// took the request from its queue, which orders the two.
	replied bool // answered: a request that arrives replied is the reply
	value   any  // the reply
}

// newCallRequest makes the request of a call from from.
func newCallRequest(from scheduler.PID, msg any) *callRequest {
	c := &callRequest{from: from, msg: msg}
	c.handle = lua.LUserData{Value: c, Metatable: callMT}
	return c
}

// callMonitor is a process's monitor of a target it calls.
type callMonitor struct {
	ref     uint64
	waiting []*task  // the tasks blocked in a call to the target
	first   [1]*task // waiting's first memory: one call at a time costs no allocation
}

// call is process.call(target, msg [, timeout]).
func (p *luaProcess) call(L *lua.LState) int {
	p.notInMatch(L, "process.call")
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
	f := p.blockable(L, "process.call") // before the request goes out
	cm := p.callMonitor(to)
	c := newCallRequest(p.pid, v)
	c.task, c.to = p.current, to
	var out any = c
	if p.rt.remote(to) {
		p.callSeq++
		c.id = p.callSeq
		out = scheduler.RemoteCall{ID: c.id, Value: goValue(v)}
	}
	if err := p.sendFromStep(to, out); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(sendError(to, err)))
		return 2
	}
	if c.id != 0 {
		if p.remoteCalls == nil {
			p.remoteCalls = map[uint64]*callRequest{}
		}
		p.remoteCalls[c.id] = c
	}
	p.current.call = c
	cm.waiting = append(cm.waiting, p.current)
	p.callsWaiting++
	if c.id == 0 {
		// The deadline is armed before the nested step: the callee's
		// step may last, and only an event for the caller (its timer
		// firing) releases it in time.
		p.waitForReply(p.current, timeout)
		if n, ok := p.nestedCall(L, c); ok {
			return n
		}
		timeout = -1 // armed already
	}
	return p.park(L, f, &request{kind: reqCall, timeout: timeout})
}

// nestedCall is a local call's try before it waits, as nestedReply is
// a plain receive's: the process it has just handed the request to runs
// its step now, inside this one (scheduler.StepOutput.RunHanded), and if
// the first message that step sends back is the reply, the call returns
// it without waiting (no step ended). The call is registered and its
// deadline set before (call): a deadline that needs a timer of its own
// yields its command, and RunHanded then runs nothing; one that an
// armed timer covers is honoured, the timer's firing releasing the
// caller (scheduler.releaseHost) and its next step timing the call out.
// A first message that is something else is taken in as its event would
// have been; the call then waits as usual. The backoff is nestedReply's.
func (p *luaProcess) nestedCall(L *lua.LState, c *callRequest) (int, bool) {
	from, msg, replied := p.nestedFirst()
	if !replied {
		return 0, false
	}
	if r, ok := msg.(*callRequest); ok && r == c && c.replied {
		p.unwaitCall(p.current)
		L.Push(toLuaValue(p.L, c.value))
		return 1, true
	}
	p.intake(&scheduler.Event{Type: scheduler.EventMessage, From: from, Data: msg}, false)
	return 0, false
}

// callMonitor returns this process's monitor of to, monitoring it now if
// it has none.
func (p *luaProcess) callMonitor(to scheduler.PID) *callMonitor {
	p.more() // the caller uses p.callSeq and the rest after this
	if cm := p.callMonOf(to); cm != nil {
		return cm
	}
	if p.callMons == nil {
		p.callMons = map[scheduler.PID]*callMonitor{}
	}
	if len(p.callMons) >= maxCallMonitors {
		for target, cm := range p.callMons {
			if len(cm.waiting) == 0 {
				p.rt.sched.Demonitor(target, cm.ref)
				p.dropCallMon(target)
			}
		}
	}
	cm := &callMonitor{ref: p.rt.sched.MonitorQuietly(p.pid, to)}
	cm.waiting = cm.first[:0]
	p.callMons[to] = cm
	return cm
}

// callMonOf is callMons[to] (p.procMore made), by way of lastMon.
func (p *luaProcess) callMonOf(to scheduler.PID) *callMonitor {
	if p.lastMon != nil && p.lastMonTo == to {
		return p.lastMon
	}
	cm := p.callMons[to]
	if cm != nil {
		p.lastMon, p.lastMonTo = cm, to
	}
	return cm
}

// dropCallMon removes callMons[to], and lastMon if it is that entry.
func (p *luaProcess) dropCallMon(to scheduler.PID) {
	delete(p.callMons, to)
	if p.lastMonTo == to {
		p.lastMon, p.lastMonTo = nil, 0
	}
}

// waitForReply gives t, blocked in a call (request, reqCall), its
// timeout.
func (p *luaProcess) waitForReply(t *task, timeout float64) {
	if timeout >= 0 { // 0: whatever is there at the next step, as receive(0)
		p.setDeadline(t, timeout)
	}
}

// endCall ends t's call with args.
func (p *luaProcess) endCall(t *task, args []lua.LValue) {
	p.unwaitCall(t)
	t.args = args
	p.ready = append(p.ready, t)
}

// unwaitCall undoes the registration of t's call (call): t no longer
// waits for the reply, its deadline or its target's end.
func (p *luaProcess) unwaitCall(t *task) {
	if cm := p.callMonOf(t.call.to); cm != nil {
		i := slices.Index(cm.waiting, t)
		last := len(cm.waiting) - 1
		cm.waiting[i] = cm.waiting[last]
		cm.waiting[last] = nil
		cm.waiting = cm.waiting[:last]
	}
	if t.call.id != 0 {
		delete(p.remoteCalls, t.call.id)
	}
	// the target may keep the request (its handle): it must not keep
	// the caller's task, and through it the caller's whole Lua state
	t.call.task = nil
	t.call = nil
	p.callsWaiting--
	p.clearDeadline(t)
}

// replied routes a reply to its call, or drops it.
func (p *luaProcess) replied(c *callRequest) {
	t := c.task
	if t == nil || t.call != c {
		p.rt.droppedReplies.Add(1) // its caller gave up
		return
	}
	t.argBuf[0] = toLuaValue(p.L, c.value)
	p.endCall(t, t.argBuf[:1])
}

// remoteCall files a call, or a reply, from a process of another node.
func (p *luaProcess) remoteCall(from scheduler.PID, rc scheduler.RemoteCall) {
	if !rc.Reply {
		c := newCallRequest(from, rc.Value)
		c.remoteID = rc.ID
		p.mailbox.push(message{from: from, value: c.msg, kind: kindCall, call: c})
		return
	}
	var c *callRequest
	if p.procMore != nil {
		c = p.remoteCalls[rc.ID]
	}
	if c == nil {
		p.rt.droppedReplies.Add(1) // its call ended
		return
	}
	c.replied, c.value = true, rc.Value
	p.replied(c)
}

// dropMonitors removes every monitor this process holds, its script's
// and its calls', as it ends: a long-lived target must not keep them.
func (p *luaProcess) dropMonitors() {
	if p.procMore == nil {
		return
	}
	for ref, target := range p.monitors {
		p.rt.sched.Demonitor(target, ref)
	}
	for target, cm := range p.callMons {
		p.rt.sched.Demonitor(target, cm.ref)
		for _, t := range cm.waiting {
			t.call.task = nil // as endCall: a target keeps no dead caller's state
		}
	}
	p.monitors, p.callMons = nil, nil
	p.lastMon, p.lastMonTo = nil, 0
}

// down files a down event: the end of a call, or of a monitored process.
func (p *luaProcess) down(ev *scheduler.Event) {
	if p.procMore == nil {
		return // no calls, no monitors: nothing waits for it
	}
	if cm := p.callMonOf(ev.From); cm != nil && cm.ref == ev.Tag {
		p.dropCallMon(ev.From) // first: endCall finds no entry to update
		if len(cm.waiting) == 0 {
			return // a monitor kept between calls: no call to end
		}
		msg := lua.LString(fmt.Sprintf("process %d ended before replying: %s", ev.From, reasonText(ev.Error)))
		if errors.Is(ev.Error, scheduler.ErrNoProcess) {
			msg = lua.LString(fmt.Sprintf("no process %d (it does not exist or has ended)", ev.From))
		}
		for _, t := range cm.waiting {
			p.endCall(t, []lua.LValue{lua.LNil, msg})
		}
		return
	}
	if _, ok := p.monitors[ev.Tag]; !ok {
		return // demonitored: nothing is delivered afterwards
	}
	delete(p.monitors, ev.Tag)
	p.mailbox.push(message{from: ev.From, kind: kindDown, ref: ev.Tag, value: endedValue(ev.Error)})
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
	var out any = c
	if c.remoteID != 0 {
		out = scheduler.RemoteCall{ID: c.remoteID, Reply: true, Value: goValue(v)}
	}
	if err := p.sendFromStep(c.from, out); err != nil {
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
