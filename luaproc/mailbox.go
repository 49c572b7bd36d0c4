package luaproc

import (
	"errors"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
)

// kind is what a mailbox entry is: what process.receive returns third.
type kind uint8

const (
	kindMessage kind = iota // process.send's (and send_after's)
	kindCall                // process.call's: the fourth value is its handle
	kindDown                // a monitored process ended
	kindExit                // a linked process ended, or the shutdown, while trapping exits
)

// kindValues are the kinds as Lua strings, boxed once.
var kindValues = [...]lua.LValue{
	kindMessage: lua.LString("message"),
	kindCall:    lua.LString("call"),
	kindDown:    lua.LString("down"),
	kindExit:    lua.LString("exit"),
}

// message is one entry waiting in a process's mailbox.
type message struct {
	from  scheduler.PID
	value any // a payload value, or a Lua scalar (messageValue)
	kind  kind
	call  *callRequest // kindCall
	ref   uint64       // kindDown: the monitor's reference
	lv    lua.LValue   // value as a Lua value, once a match function saw it
}

// luaValue is m's value as receive returns it. A down or exit event's
// value is its reason: the table {pid=, ref=, reason=} is made here, when
// a script first sees the event, not when it is queued.
func (m *message) luaValue(L *lua.LState) lua.LValue {
	if m.lv != nil {
		return m.lv
	}
	switch v := m.value.(type) {
	case lua.LNumber, lua.LBool: // as toLuaValue: nothing to convert or charge
		if m.kind == kindMessage || m.kind == kindCall {
			return v.(lua.LValue)
		}
	}
	return m.madeValue(L)
}

// madeValue is luaValue for a value that takes converting (its deferred
// call kept out of the common case, a scalar message).
func (m *message) madeValue(L *lua.LState) lua.LValue {
	if p, ok := L.G.Views.Maker.(*luaProcess); ok && !p.taking {
		// taken in whole: a refused charge would lose the message
		// (memory.go)
		p.taking = true
		defer func() { p.taking = false }()
	}
	switch m.kind {
	case kindDown, kindExit:
		t := L.CreateTable(0, 4)
		t.RawSetString("pid", lua.LNumber(m.from))
		if m.kind == kindDown {
			t.RawSetString("ref", lua.LNumber(m.ref))
		}
		reason := m.value
		if r, ok := reason.(*tracedReason); ok {
			reason = r.reason
			t.RawSetString("traceback", lua.LString(r.trace))
		}
		t.RawSetString("reason", toLuaValue(L, reason))
		return t
	}
	return toLuaValue(L, m.value)
}

// tracedReason is the value of a down or exit event whose process
// raised a Lua error with a traceback (ScriptError.LuaTraceback): the
// event's table gets a traceback field besides the reason.
type tracedReason struct {
	reason any
	trace  string
}

// endedValue is a down or exit event's value for a process that ended
// with err: its reason (reasonValue), with the traceback if it has one.
func endedValue(err error) any {
	var se *ScriptError
	if errors.As(err, &se) && se.Traceback != "" {
		return &tracedReason{reason: reasonValue(err), trace: se.Traceback}
	}
	return reasonValue(err)
}

// sent reports whether the entry came through Send (and so counts
// against the mailbox limit: StepOutput.Backlog).
func (m *message) sent() bool { return m.kind == kindMessage || m.kind == kindCall }

// mailbox is a FIFO of messages (a slice used as a queue, compacted as it
// drains, so a busy mailbox does not grow without bound). Selective
// receive takes entries from the middle (take).
type mailbox struct {
	items []message
	head  int
	sent  int // entries that came through Send
}

func (m *mailbox) push(msg message) {
	m.items = append(m.items, msg)
	if msg.sent() {
		m.sent++
	}
}

func (m *mailbox) len() int { return len(m.items) - m.head }

// at returns the i-th waiting entry (0: the oldest).
func (m *mailbox) at(i int) *message { return &m.items[m.head+i] }

// take removes and returns the i-th waiting entry.
func (m *mailbox) take(i int) message {
	j := m.head + i
	msg := m.items[j]
	if msg.sent() {
		m.sent--
	}
	if i == 0 {
		m.items[j] = message{}
		m.head++
	} else {
		copy(m.items[j:], m.items[j+1:])
		m.items[len(m.items)-1] = message{}
		m.items = m.items[:len(m.items)-1]
	}
	switch {
	case m.head == len(m.items):
		m.items, m.head = m.items[:0], 0
	case m.head >= 64 && m.head*2 >= len(m.items):
		n := copy(m.items, m.items[m.head:])
		clear(m.items[n:])
		m.items, m.head = m.items[:n], 0
	}
	return msg
}
