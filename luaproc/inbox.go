package luaproc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Message is what a Lua process sent to an Inbox, or an event about one.
type Message struct {
	From PID
	// Kind is "message" (process.send), "call" (process.call: answer it
	// with Reply), "down" (a process the inbox monitors ended) or "exit"
	// (a process linked to the inbox ended: an inbox always takes that
	// as an event).
	Kind  string
	Value any // a payload value; for down and exit: {pid=, ref=, reason=}

	call *callRequest
}

// Inbox is the Go side's own process: Lua sends to its PID with
// process.send, and Go reads with Receive. Messages sent with Inbox.Send
// come from its PID, so a Lua process can reply to it. An inbox can
// monitor and link processes, call them and answer their calls.
type Inbox struct {
	rt *Runtime
	h  scheduler.Handle

	mu     sync.Mutex
	queue  []Message
	signal chan struct{}            // one token while queue may be non-empty
	calls  map[uint64]chan callDone // Call's waiting for their reply
}

// callDone ends one of an inbox's calls.
type callDone struct {
	value any
	err   error
}

// NewInbox starts an inbox process.
func (rt *Runtime) NewInbox() (*Inbox, error) {
	in := &Inbox{rt: rt, signal: make(chan struct{}, 1), calls: map[uint64]chan callDone{}}
	h, err := rt.sched.Submit(inboxProcess{in}, "", nil)
	if err != nil {
		return nil, fmt.Errorf("new inbox: %w", err)
	}
	in.h = h
	return in, nil
}

// PID returns the inbox's PID.
func (in *Inbox) PID() PID { return in.h.PID() }

// Send sends msg (converted as Runtime.Send converts) to process to,
// from this inbox.
func (in *Inbox) Send(to PID, msg any) error {
	return in.rt.sendFrom(in.PID(), to, msg)
}

// Monitor makes the inbox receive a "down" Message when process pid ends
// (at once if it has: reason "noproc"); it returns the monitor's ref.
func (in *Inbox) Monitor(pid PID) uint64 { return in.rt.sched.Monitor(in.PID(), pid) }

// Demonitor removes a monitor of pid; a down already queued may still
// be received.
func (in *Inbox) Demonitor(pid PID, ref uint64) { in.rt.sched.Demonitor(pid, ref) }

// Link links the inbox and process pid: its end comes as an "exit"
// Message; the inbox's end kills it (unless it traps exits).
func (in *Inbox) Link(pid PID) error { return in.rt.sched.Link(in.PID(), pid) }

// Call sends msg to process to as a call and waits for the reply, the
// process's end (an error with its reason), or ctx.
func (in *Inbox) Call(ctx context.Context, to PID, msg any) (any, error) {
	msg, err := payload.FromGo(msg)
	if err != nil {
		return nil, fmt.Errorf("call %d: %w", to, err)
	}
	done := make(chan callDone, 1)
	in.mu.Lock()
	ref := in.rt.sched.MonitorQuietly(in.PID(), to) // under mu: its down finds the call
	in.calls[ref] = done
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		delete(in.calls, ref)
		in.mu.Unlock()
		in.rt.sched.Demonitor(to, ref)
	}()
	c := newCallRequest(in.PID(), msg)
	c.ref = ref
	var out any = c
	if in.rt.remote(to) { // numbered by its monitor's reference (calls.go)
		out = scheduler.RemoteCall{ID: ref, Value: msg}
	}
	if err := in.rt.sched.Send(in.PID(), to, out); err != nil {
		return nil, fmt.Errorf("call %d: %w", to, err)
	}
	select {
	case d := <-done:
		return d.value, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Reply answers a Message of kind "call" with value.
func (in *Inbox) Reply(m Message, value any) error {
	if m.call == nil {
		return errors.New("reply: not a call")
	}
	value, err := payload.FromGo(value)
	if err != nil {
		return fmt.Errorf("reply: %w", err)
	}
	in.mu.Lock()
	replied := m.call.replied
	if !replied {
		m.call.replied, m.call.value = true, value
	}
	in.mu.Unlock()
	if replied {
		return errors.New("reply: this call has been answered already")
	}
	if id := m.call.remoteID; id != 0 {
		return in.rt.sched.Send(in.PID(), m.call.from, scheduler.RemoteCall{ID: id, Reply: true, Value: value})
	}
	return in.rt.sched.Send(in.PID(), m.call.from, m.call)
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

// inboxProcess moves the inbox's messages into its queue, and its
// replies and calls' downs to its calls.
type inboxProcess struct{ in *Inbox }

func (inboxProcess) Init(context.Context, string, payload.Payloads) error { return nil }

func (ip inboxProcess) Step(events []scheduler.Event, out *scheduler.StepOutput) error {
	in := ip.in
	in.mu.Lock()
	for i := range events {
		if m, ok := in.take(&events[i]); ok {
			in.queue = append(in.queue, m)
		} else if events[i].Type == scheduler.EventCancel {
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

// take turns an event into a queued Message (under mu), or answers a
// call with it; false if it is neither.
func (in *Inbox) take(ev *scheduler.Event) (Message, bool) {
	switch ev.Type {
	case scheduler.EventMessage:
		if d, ok := ev.Data.(*callRequest); ok {
			if !d.replied {
				return Message{From: ev.From, Kind: "call", Value: goValue(d.msg), call: d}, true
			}
			if done, ok := in.calls[d.ref]; !ok || !in.end(done, callDone{value: goValue(d.value)}) {
				in.rt.droppedReplies.Add(1)
			}
			return Message{}, false
		}
		if rc, ok := ev.Data.(scheduler.RemoteCall); ok {
			return in.takeRemoteCall(ev.From, rc)
		}
		return Message{From: ev.From, Kind: "message", Value: goValue(ev.Data)}, true
	case scheduler.EventDown:
		if done, ok := in.calls[ev.Tag]; ok {
			in.end(done, callDone{err: fmt.Errorf("call %d: the process ended before replying: %s", ev.From, reasonText(ev.Error))})
			return Message{}, false
		}
		return Message{From: ev.From, Kind: "down",
			Value: withTraceback(map[string]any{"pid": int64(ev.From), "ref": int64(ev.Tag), "reason": reasonValue(ev.Error)}, ev.Error)}, true
	case scheduler.EventExit:
		return Message{From: ev.From, Kind: "exit",
			Value: withTraceback(map[string]any{"pid": int64(ev.From), "reason": reasonValue(ev.Error)}, ev.Error)}, true
	}
	return Message{}, false
}

// takeRemoteCall is take for a call, or a reply, from another node.
func (in *Inbox) takeRemoteCall(from scheduler.PID, rc scheduler.RemoteCall) (Message, bool) {
	if !rc.Reply {
		c := newCallRequest(from, rc.Value)
		c.remoteID = rc.ID
		return Message{From: from, Kind: "call", Value: rc.Value, call: c}, true
	}
	if done, ok := in.calls[rc.ID]; !ok || !in.end(done, callDone{value: rc.Value}) {
		in.rt.droppedReplies.Add(1)
	}
	return Message{}, false
}

// end ends a call with d unless it has ended (its done holds the reply,
// and Call, its context done, has not removed it yet): it never blocks,
// as it runs under mu, which Call needs to remove the call.
func (in *Inbox) end(done chan callDone, d callDone) bool {
	select {
	case done <- d:
		return true
	default:
		return false
	}
}

func (inboxProcess) Close() {}

// RegisterName gives process pid a name that Lua's process.send, call,
// monitor and link accept (as process.register does: in a cluster, in
// the whole cluster, which takes a round trip to the NATS server).
func (rt *Runtime) RegisterName(name string, pid PID) error {
	if name == "" {
		return errors.New("register: a name must not be empty")
	}
	if err := rt.sched.Register(name, pid); err != nil || rt.cluster == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return rt.registerCluster(ctx, name, pid)
}

// UnregisterName releases a name; it reports whether a process held it.
func (rt *Runtime) UnregisterName(name string) bool { return rt.sched.Unregister(name) }

// Whereis returns the process registered under name.
func (rt *Runtime) Whereis(name string) (PID, bool) { return rt.whereis(name) }

// withTraceback adds to a down or exit event the traceback of the Lua
// error that ended the process, if it has one (ScriptError.LuaTraceback).
func withTraceback(ev map[string]any, err error) map[string]any {
	var se *ScriptError
	if errors.As(err, &se) && se.Traceback != "" {
		ev["traceback"] = se.Traceback
	}
	return ev
}
