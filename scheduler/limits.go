package scheduler

// Limits: how many processes may live (Options.MaxProcs), and how many
// messages may wait for one process (Options.MaxMailbox), with a warning
// for a mailbox that grows without a limit (Options.MailboxWarning).
//
// # Processes
//
// slots counts the processes that hold a place: those live and those in
// Submit between taking a place and ending or failing Init. A Submit
// takes its place with one Add and gives it back if that passed the
// limit, so concurrent Submits never pass it together, and a place is
// held exactly as long as its process (noteEnded gives it back).
//
// # Mailboxes
//
// proc.mailbox counts the messages Send accepted that the process has not
// taken: those in its event queue, and those it holds unread after a step
// (StepOutput.Backlog, a Lua process's own mailbox). Senders add 1 before
// they push (and take it back if that passed MaxMailbox); the worker that
// runs the process subtracts what it drained, and adds the change in the
// process's backlog after each step. So the count is exact whenever no
// send or step is in progress, and never below the truth during one: a
// limit is never passed. With MaxMailbox negative nothing is counted.
//
// The warning (MailboxWarning) is for a process that is not taking its
// messages, not for one that is busy taking a great many: a send that
// finds the count at the threshold starts a window (mailboxOver), and
// every step in which the process takes messages restarts it (or closes
// it, if the count fell below the threshold). A send past the threshold
// (every mailboxCheckEvery-th, to keep the clock off the send path) that
// finds the window open for mailboxIdle, while the process is not in a
// step, gives the warning, once per process.

import (
	"fmt"
	"time"
)

// mailboxIdle is how long a process over the warning threshold must have
// taken no message before the warning; mailboxCheckEvery is how many
// sends past the threshold apart the senders look.
var (
	mailboxIdle       = time.Second
	mailboxCheckEvery = int64(256)
)

// limits are a Scheduler's Options limits, resolved (read-only).
type limits struct {
	maxProcs    int64 // 0: none
	maxMailbox  int64 // 0: none
	warnMailbox int64 // 0: no warning
	counting    bool  // mailboxes are counted
	warn        func(pid PID, msg string)
}

func newLimits(opts Options) limits {
	l := limits{warn: opts.Warn}
	switch {
	case opts.MaxProcs == 0:
		l.maxProcs = DefaultMaxProcs
	case opts.MaxProcs > 0:
		l.maxProcs = int64(opts.MaxProcs)
	}
	switch {
	case opts.MaxMailbox > 0:
		l.maxMailbox, l.counting = int64(opts.MaxMailbox), true
	case opts.MaxMailbox == 0:
		l.warnMailbox, l.counting = DefaultMailboxWarning, true
		if opts.MailboxWarning > 0 {
			l.warnMailbox = int64(opts.MailboxWarning)
		}
	}
	return l
}

// takeSlot takes a place for a new process, or reports that MaxProcs
// would be passed.
func (l *limits) takeSlot(s *Scheduler) bool {
	n := s.slots.Add(1)
	if l.maxProcs > 0 && n > l.maxProcs {
		s.slots.Add(-1)
		return false
	}
	return true
}

// countsHandOff reports whether a message handed straight to p
// (handoff.go) is counted in its mailbox: the send then admits it before
// the hand-off, as it does a queued one. A MaxMailbox needs every one:
// the count a limit checks must never be below the truth. With a
// warning alone, one is left out (two locked adds less a message) while
// p's count is below the threshold by more than it: the receiver takes
// it in its next step, and a step that keeps it unread counts it then,
// in its backlog (took), one at a time. From there on each is counted,
// for admit's look at the warning (the count then meets the threshold
// in admit): a process that keeps every message unread (a selective
// receive that never matches) waits for messages between them, so every
// one is handed over, and a count that only took raised would never
// warn.
func (l *limits) countsHandOff(p *proc) bool {
	return l.maxMailbox > 0 || l.warnMailbox > 0 && p.mailbox.Load() >= l.warnMailbox-1
}

// admit counts a message for p, or reports that p's mailbox is full. Past
// warnMailbox it looks whether p has stopped taking messages (idleMailbox).
func (l *limits) admit(s *Scheduler, p *proc) bool {
	if !l.counting {
		return true
	}
	n := p.mailbox.Add(1)
	switch {
	case l.maxMailbox > 0 && n > l.maxMailbox:
		p.mailbox.Add(-1)
		return false
	case l.warnMailbox > 0 && n >= l.warnMailbox && (n == l.warnMailbox || n%mailboxCheckEvery == 0):
		l.idleMailbox(p, n)
	}
	return true
}

// idleMailbox opens p's window at the threshold, and gives the warning if
// it has stayed open for mailboxIdle while p is not in a step.
func (l *limits) idleMailbox(p *proc, n int64) {
	if l.warn == nil || p.flag(pflagMailboxWarned) {
		return
	}
	now := time.Now().UnixNano()
	since := p.mailboxOver.Load()
	if since == 0 {
		p.mailboxOver.CompareAndSwap(0, now)
		return
	}
	idle := time.Duration(now - since)
	if idle < mailboxIdle || p.state.Load()&stateMask == stateRunning {
		return
	}
	if p.setFlag(pflagMailboxWarned) {
		l.warn(p.pid, fmt.Sprintf("%d messages are waiting for process %d, which has taken none for %v (set a mailbox limit to refuse more)",
			n, p.pid, idle.Round(100*time.Millisecond)))
	}
}

// took records, for the worker that ran p, that the step was given
// drained messages and left backlog of them unread (with the previous
// backlog, p.backlog, updated here); if it took some while its warning
// window is open, the window restarts (or closes below the threshold).
func (l *limits) took(p *proc, drained, backlog int) {
	if l.counting {
		if d := backlog - int(p.backlog) - drained; d != 0 {
			p.mailbox.Add(int64(d))
			if d < 0 && p.mailboxOver.Load() != 0 {
				l.tookOver(p)
			}
		}
	}
	p.backlog = int32(backlog) // messages in memory: fewer than 2^31
}

// tookOver restarts p's open warning window: p took messages now.
func (l *limits) tookOver(p *proc) {
	if p.mailbox.Load() < l.warnMailbox {
		p.mailboxOver.Store(0)
	} else {
		p.mailboxOver.Store(time.Now().UnixNano())
	}
}
