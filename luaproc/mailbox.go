package luaproc

import "github.com/luarun/luarun/scheduler"

// message is one message waiting in a process's mailbox.
type message struct {
	from  scheduler.PID
	value any
}

// mailbox is a FIFO of messages (a slice used as a queue, compacted as it
// drains, so a busy mailbox does not grow without bound).
type mailbox struct {
	items []message
	head  int
}

func (m *mailbox) push(msg message) { m.items = append(m.items, msg) }

func (m *mailbox) len() int { return len(m.items) - m.head }

func (m *mailbox) pop() (message, bool) {
	if m.head == len(m.items) {
		return message{}, false
	}
	msg := m.items[m.head]
	m.items[m.head] = message{}
	m.head++
	switch {
	case m.head == len(m.items):
		m.items, m.head = m.items[:0], 0
	case m.head >= 64 && m.head*2 >= len(m.items):
		n := copy(m.items, m.items[m.head:])
		clear(m.items[n:])
		m.items, m.head = m.items[:n], 0
	}
	return msg, true
}
