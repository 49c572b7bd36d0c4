package luaproc

import (
	"context"
	"sync"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Message is a message a Lua process sent to an Inbox.
type Message struct {
	From  scheduler.PID
	Value any // a payload value
}

// Inbox is the Go side's own process: Lua sends to its PID with
// process.send, and Go reads with Receive. Messages sent with Inbox.Send
// come from its PID, so a Lua process can reply to it.
type Inbox struct {
	rt *Runtime
	h  scheduler.Handle

	mu     sync.Mutex
	queue  []Message
	signal chan struct{} // one token while queue may be non-empty
}

// NewInbox starts an inbox process.
func (rt *Runtime) NewInbox() (*Inbox, error) {
	in := &Inbox{rt: rt, signal: make(chan struct{}, 1)}
	h, err := rt.sched.Submit(inboxProcess{in}, "", nil)
	if err != nil {
		return nil, err
	}
	in.h = h
	return in, nil
}

// PID returns the inbox's PID.
func (in *Inbox) PID() scheduler.PID { return in.h.PID() }

// Send sends msg to process to, from this inbox.
func (in *Inbox) Send(to scheduler.PID, msg any) error {
	return in.rt.sendFrom(in.PID(), to, msg)
}

// Receive returns the next message, waiting for one until ctx is done.
func (in *Inbox) Receive(ctx context.Context) (Message, error) {
	for {
		in.mu.Lock()
		if len(in.queue) > 0 {
			m := in.queue[0]
			in.queue[0] = Message{}
			in.queue = in.queue[1:]
			if len(in.queue) > 0 {
				in.notify()
			}
			in.mu.Unlock()
			return m, nil
		}
		in.mu.Unlock()
		select {
		case <-in.signal:
		case <-in.h.Done():
			in.mu.Lock()
			empty := len(in.queue) == 0
			in.mu.Unlock()
			if empty {
				return Message{}, scheduler.ErrProcessEnded
			}
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Close ends the inbox process; later sends to it fail.
func (in *Inbox) Close() error {
	return in.rt.sched.Kill(in.PID(), nil)
}

func (in *Inbox) notify() {
	select {
	case in.signal <- struct{}{}:
	default:
	}
}

// inboxProcess moves the inbox's messages into its queue.
type inboxProcess struct{ in *Inbox }

func (inboxProcess) Init(context.Context, string, payload.Payloads) error { return nil }

func (ip inboxProcess) Step(events []scheduler.Event, out *scheduler.StepOutput) error {
	in := ip.in
	in.mu.Lock()
	for _, ev := range events {
		switch ev.Type {
		case scheduler.EventMessage:
			in.queue = append(in.queue, Message{From: ev.From, Value: goValue(ev.Data)})
		case scheduler.EventCancel:
			out.Status = scheduler.StatusDone
		}
	}
	if len(in.queue) > 0 {
		in.notify()
	}
	in.mu.Unlock()
	if out.Status != scheduler.StatusDone {
		out.Status = scheduler.StatusReceive
	}
	return nil
}

func (inboxProcess) Close() {}
