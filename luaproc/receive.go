package luaproc

// What arrives in a process, and process.receive.
//
// Every event a step gets that is not a completion ends up in the
// mailbox as an entry of a kind: a message, a call, a down (a monitored
// process ended), an exit (a linked process ended, or the shutdown, while
// the process traps exits). Replies to the process's own calls never do:
// they go straight to the task waiting in process.call (calls.go). An
// exit signal of a process that does not trap exits ends it instead.
//
// Receivers — tasks blocked in process.receive — take entries in order,
// first come first served. A selective receiver (receive{match = f})
// takes the first entry f accepts; the others stay, in order. Its cursor
// (task.scanned) counts the entries from the head that f has already
// refused, so each entry is shown to f once per receive however many
// arrive while it waits: a receive is linear in the mailbox, not
// quadratic. f runs in the receiving task's coroutine when receive is
// called, and in a spare coroutine of the process when an entry arrives
// for a blocked receiver; an error it raises there is raised in the task
// when it resumes (luaCtx.raise), as if receive had raised it.

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/luaproc/lualib"
	"github.com/luarun/luarun/scheduler"
)

// intake files an event that is not a completion or a cancel. last: it
// is the step's last event (handDirect).
func (p *luaProcess) intake(ev *scheduler.Event, last bool) {
	switch ev.Type {
	case scheduler.EventMessage:
		switch d := ev.Data.(type) {
		case *callRequest:
			if d.replied {
				p.replied(d)
				break
			}
			m := message{from: ev.From, value: d.msg, kind: kindCall, call: d}
			if !last || !p.handDirect(&m) { // a server waiting in receive: as a message
				p.mailbox.push(m)
			}
		case scheduler.RemoteCall:
			p.remoteCall(ev.From, d)
		default:
			m := message{from: ev.From, value: ev.Data}
			if !last || !p.handDirect(&m) {
				p.mailbox.push(m)
			}
		}
	case scheduler.EventDown:
		p.down(ev)
	case scheduler.EventExit:
		switch {
		case p.trapping.Load():
			p.mailbox.push(message{from: ev.From, kind: kindExit, value: endedValue(ev.Error)})
		case ev.Error != nil: // an exit signal: end with it
			p.end(nil, linkedError(ev.From, ev.Error))
		}
	}
}

// trappedShutdown files the shutdown as an exit event (a process that
// traps exits keeps running until the grace period ends).
func (p *luaProcess) trappedShutdown() {
	p.mailbox.push(message{kind: kindExit, value: "shutdown"}) // from PID 0
}

// reasonValue is how a process ended, as down and exit events carry it:
// "normal", "noproc", "shutdown", "noconnection" (its node went away),
// "killed: <reason>", or the error — its value if it was one that can be
// sent (a table), else its message. An error from another node carries
// its value (cluster.RemoteError).
func reasonValue(err error) any {
	var ev interface{ ExitValue() any }
	switch {
	case err == nil:
		return "normal"
	case errors.Is(err, scheduler.ErrNoProcess):
		return "noproc"
	case errors.Is(err, scheduler.ErrShutdown):
		return "shutdown"
	case errors.Is(err, scheduler.ErrNoConnection):
		return "noconnection"
	case errors.As(err, &ev) && ev.ExitValue() != nil:
		return ev.ExitValue()
	}
	return err.Error()
}

// reasonText is reasonValue as text.
func reasonText(err error) string {
	if s, ok := reasonValue(err).(string); ok {
		return s
	}
	var se *ScriptError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}

// LinkedError ends a process that does not trap exits when a process
// linked to it ends with an error.
type LinkedError struct {
	PID    PID    // the process that ended
	Reason string // its reason, as text
}

func (e *LinkedError) Error() string {
	if strings.HasPrefix(e.Reason, "linked process ") {
		return e.Reason // a chain does not nest it
	}
	return fmt.Sprintf("linked process %d failed: %s", e.PID, e.Reason)
}

func linkedError(pid scheduler.PID, reason error) error {
	return &LinkedError{PID: pid, Reason: reasonText(reason)}
}

// receive is process.receive([timeout]) and process.receive{match=,
// timeout=}: msg, from, kind, and the call handle for a call.
func (p *luaProcess) receive(L *lua.LState) int {
	p.notInMatch(L, "process.receive")
	timeout := -1.0
	if L.GetTop() > 0 { // process.receive(): no argument to look at
		if opts, ok := L.Get(1).(*lua.LTable); ok {
			return p.receiveMatch(L, opts)
		}
		timeout = optTimeout(L, 1)
	}
	if p.mailbox.len() > 0 { // tested first: most receives that block find it empty
		m := p.mailbox.take(0)
		return p.pushMessage(L, &m)
	}
	switch timeout {
	case 0:
		return pushTimeout(L)
	case -1:
		f := p.blockable(L, "process.receive")
		if n, ok := p.nestedReply(L); ok {
			return n
		}
		return p.park(L, f, &receiveForever)
	}
	return p.block(L, "process.receive", &request{kind: reqReceive, timeout: timeout})
}

// nestedReply is a plain receive's try before it waits: the process
// this step handed a message to runs its step now, inside this one
// (scheduler.StepOutput.RunHanded), and the message it sends back, if
// it does, is what receive returns. Only with no other receiver waiting
// (the first to wait is the first served) and the mailbox empty (the
// caller saw it so). A nested step that sent nothing back (a ring: the
// message goes on to a third process) costs its bookkeeping for nothing,
// so after one the process waits without trying for the next
// nestedSkipsAfter(misses) receives: 15, 31, ... 255 as such steps follow
// each other, until one brings a reply.
func (p *luaProcess) nestedReply(L *lua.LState) (int, bool) {
	if len(p.receivers) > 0 {
		return 0, false
	}
	from, msg, replied := p.nestedFirst()
	if !replied {
		return 0, false
	}
	switch msg.(type) {
	case *callRequest, scheduler.RemoteCall: // a call, or the reply to one of ours
		p.intake(&scheduler.Event{Type: scheduler.EventMessage, From: from, Data: msg}, false)
		if p.mailbox.len() == 0 || len(p.receivers) > 0 {
			return 0, false // it went to the call waiting for it
		}
		m := p.mailbox.take(0)
		return p.pushMessage(L, &m), true
	}
	m := message{from: from, value: msg}
	return p.pushMessage(L, &m), true
}

// nestedFirst runs, unless the backoff says to wait, the step of the
// process this step handed a message to, nested (RunHanded), and
// returns the first message that step sent back, if it sent one it
// could hand over (replied). It keeps the backoff of nestedReply and
// nestedCall: a nested step that brought nothing back lengthens it, one
// that did resets it.
func (p *luaProcess) nestedFirst() (from scheduler.PID, msg any, replied bool) {
	if p.out == nil {
		return 0, nil, false
	}
	if p.nestedSkips > 0 {
		p.nestedSkips--
		return 0, nil, false
	}
	from, msg, ran, replied := p.out.RunHanded()
	if !replied {
		if ran {
			p.nestedSkips = nestedSkipsAfter(p.nestedMisses)
			p.nestedMisses = min(p.nestedMisses+1, maxNestedMisses)
		}
		return 0, nil, false
	}
	p.nestedMisses = 0
	return from, msg, true
}

// nestedSkipsAfter is how many plain receives wait without a nested
// step after misses+1 nested steps in a row brought no reply.
func nestedSkipsAfter(misses uint8) uint8 { return uint8(16<<int(misses) - 1) }

// maxNestedMisses caps nestedMisses where nestedSkipsAfter reaches 255.
const maxNestedMisses = 4

// receiveForever is the request of a process.receive() without a
// timeout. Not built on the stack: park copies a request with 16-byte
// loads, which stall on a struct just written by 8-byte stores (perf: most
// of park's time in a ping-pong).
var receiveForever = request{kind: reqReceive, timeout: -1}

func pushTimeout(L *lua.LState) int {
	L.Push(lua.LNil)
	L.Push(timeoutValue)
	return 2
}

var timeoutValue lua.LValue = lua.LString("timeout")

// receiveMatch is the selective receive: it takes the first entry match
// accepts, or waits for one.
func (p *luaProcess) receiveMatch(L *lua.LState, opts *lua.LTable) int {
	if err := lualib.CheckOptions(opts, "match", "timeout"); err != nil {
		L.RaiseError("process.receive: %v", err)
	}
	f, ok := opts.RawGetString("match").(*lua.LFunction)
	if !ok {
		L.ArgError(1, "match: a function expected")
	}
	L.Push(opts.RawGetString("timeout"))
	timeout := optTimeout(L, L.GetTop())
	for i := 0; i < p.mailbox.len(); i++ {
		if p.accepts(L, f, p.mailbox.at(i)) {
			m := p.take(i)
			return p.pushMessage(L, &m)
		}
	}
	if timeout == 0 {
		return pushTimeout(L)
	}
	return p.block(L, "process.receive", &request{kind: reqReceive, timeout: timeout, match: f, scanned: int32(p.mailbox.len())})
}

// notInMatch raises the error of name (process.receive, wait, call,
// time.sleep or another blocking call) when a receive{match=} function
// is running: a match function only looks at a message. Receiving
// there would take entries from the mailbox the receive is scanning,
// and blocking would suspend the scan (or, outside a step, could not).
func (p *luaProcess) notInMatch(L *lua.LState, name string) {
	if p.inMatch > 0 {
		L.RaiseError("%s: cannot be called inside a receive{match=} function", name)
	}
}

// accepts calls match(msg, from, kind) in L and reports whether it
// returned true (an error it raises propagates).
func (p *luaProcess) accepts(L *lua.LState, match *lua.LFunction, m *message) bool {
	if m.lv == nil {
		m.lv = m.luaValue(p.L)
	}
	p.inMatch++
	defer func() { p.inMatch-- }()
	L.Push(match)
	L.Push(m.lv)
	L.Push(p.pidValue(m.from))
	L.Push(kindValues[m.kind])
	L.Call(3, 1)
	ok := lua.LVAsBool(L.Get(-1))
	L.Pop(1)
	return ok
}

// take removes entry i from the mailbox and moves the cursors of the
// selective receivers past it back by one.
func (p *luaProcess) take(i int) message {
	for _, r := range p.receivers {
		if r.match != nil && r.scanned > i {
			r.scanned--
		}
	}
	return p.mailbox.take(i)
}

// pushMessage pushes what receive returns for m.
func (p *luaProcess) pushMessage(L *lua.LState, m *message) int {
	L.Push(m.luaValue(L))
	L.Push(p.pidValue(m.from))
	L.Push(kindValues[m.kind])
	if m.kind == kindCall {
		L.Push(p.callHandle(m.call))
		return 4
	}
	return 3
}

// handDirect gives m to the first receiver if deliverMessages would
// (the mailbox is empty and that receiver takes any entry), without the
// mailbox's push and take; it reports whether it did. Only for the
// step's last event: an event after it (a cancel) could end the process
// before the receiver runs, and the message would then not be counted
// as dropped (StepOutput.Backlog counts the mailbox).
func (p *luaProcess) handDirect(m *message) bool {
	if p.mailbox.len() > 0 || len(p.receivers) == 0 || p.receivers[0].match != nil || p.done {
		return false
	}
	t := p.receivers[0]
	if len(p.receivers) == 1 { // the common case, without the copy's write barriers
		p.receivers[0] = nil
		p.receivers = p.receivers[:0]
	} else {
		p.receivers = append(p.receivers[:0], p.receivers[1:]...)
	}
	p.clearDeadline(t)
	t.args = p.messageArgs(t, m)
	p.ready = append(p.ready, t)
	return true
}

// deliverMessages hands queued entries to waiting receivers.
func (p *luaProcess) deliverMessages() {
	for i := 0; i < len(p.receivers) && p.mailbox.len() > 0; {
		t := p.receivers[i]
		idx, err := p.findFor(t)
		if idx < 0 && err == nil {
			i++
			continue
		}
		p.receivers = append(p.receivers[:i], p.receivers[i+1:]...)
		p.clearDeadline(t)
		t.match = nil
		if err != nil { // match raised: raise it in the task (luaCtx.raise)
			t.raise = err
			t.args = nil
		} else {
			m := p.take(idx)
			t.args = p.messageArgs(t, &m)
		}
		p.ready = append(p.ready, t)
	}
}

// findFor returns the index of the first entry receiver t takes, or -1.
func (p *luaProcess) findFor(t *task) (int, error) {
	if t.match == nil {
		return 0, nil // the caller saw the mailbox is not empty
	}
	for ; t.scanned < p.mailbox.len(); t.scanned++ {
		ok, err := p.acceptsAside(t.match, p.mailbox.at(t.scanned))
		if err != nil {
			return -1, err
		}
		if ok {
			return t.scanned, nil
		}
	}
	return -1, nil
}

// acceptsAside is accepts in a spare coroutine, outside any task.
func (p *luaProcess) acceptsAside(match *lua.LFunction, m *message) (ok bool, err error) {
	co := p.takeThread()
	defer p.dropThread(co)
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	if m.lv == nil {
		m.lv = m.luaValue(p.L)
	}
	p.inMatch++
	defer func() { p.inMatch-- }()
	err = co.CallByParam(lua.P{Fn: match, NRet: 1, Protect: true}, m.lv, p.pidValue(m.from), kindValues[m.kind])
	if err != nil {
		return false, errors.New(errorText(err))
	}
	ok = lua.LVAsBool(co.Get(-1))
	co.SetTop(0)
	return ok, nil
}

// messageArgs are the values a receiver resumes with for m (into the
// task's own buffer when they fit). Of a plain message, only as many as
// the receive's call site takes (t.wants, fitValues would drop the
// rest): a statement's receive makes none, an expression's the value.
func (p *luaProcess) messageArgs(t *task, m *message) []lua.LValue {
	if m.kind == kindMessage && uint32(t.wants) < 3 { // -1 (all) is not
		switch t.wants {
		case 0:
			return t.argBuf[:0]
		case 1:
			return append(t.argBuf[:0], m.luaValue(p.L))
		}
		return append(t.argBuf[:0], m.luaValue(p.L), p.pidValue(m.from))
	}
	args := append(t.argBuf[:0], m.luaValue(p.L), p.pidValue(m.from), kindValues[m.kind])
	if m.kind == kindCall {
		args = append(args, p.callHandle(m.call))
	}
	return args
}
