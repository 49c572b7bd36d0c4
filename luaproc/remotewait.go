package luaproc

// process.spawn_on's two answers that only the receiving node knows: is
// the entry there, and how did the process end (process.wait).
//
// The entry. A script's entries are known once its chunk has run to its
// end in some process (resolve). A spawn request for a script whose
// entries are known is answered at once (an unknown entry is nil, err);
// otherwise the new process announces its resolution (spawnAnswer) and
// the request is answered then — with the PID, or with the *EntryError
// — or after entryWait, whichever is first: a chunk that takes longer
// (it may block) gets its PID, and an unknown entry is then the
// process's error, which process.wait reports.
//
// The end. The request names the requesting runtime's collector (its
// endsProcess: a Lua process blocked in process.wait takes no messages
// or downs, so they go to a process that always takes them). When the
// process ends (Ended, before its monitors and links fire), its node
// sends the collector its results as a scheduler.RemoteCall reply
// numbered 0 (no call has that number), on the ordered path between the
// two nodes, so it precedes the process's down. The runtime keeps it
// (remoteEnds, by the process's PID, for the process that called
// spawn_on) until process.wait takes it. The collector monitors the
// process quietly from the moment spawn_on has its PID: a down that
// arrives with no result — the node went away ("noconnection"), or the
// result was lost — ends the wait with false and the reason. A process
// refused for its entry sends nothing (nobody holds its PID), and its
// end is no crash report (the requester was told).
//
// The table of ends, and when its entries go, is remoteends.go's. The
// spawn answers live in the Runtime (spawnAnswers), not in luaProcess,
// whose size is at a size class's edge.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// entryWait bounds how long a spawn request waits for the new process's
// chunk to resolve its entry (well under spawnTimeout).
const entryWait = 3 * time.Second

// endCallID numbers the RemoteCall reply that carries a process's end
// to its waiter; calls are numbered from 1.
const endCallID = 0

// waitCommand is the command of process.wait on a process of another
// node.
const waitCommand = "cluster.wait"

// spawnAnswer is a process started for another node: whom to tell its
// end, and how its entry resolved. Shared by the process and the
// goroutine answering the request, under mu.
type spawnAnswer struct {
	waiter   scheduler.PID
	resolved chan error // buffered: the entry's resolution (nil: found)

	mu       sync.Mutex
	answered bool // the request has its answer (or gave up waiting)
	refused  bool // it was answered with the entry's error
}

// announce is the process's side: its entry resolved with err (nil:
// found), or the process ended before it did (nil). It reports whether
// the request still waited for it.
func (a *spawnAnswer) announce(err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.answered {
		return false
	}
	a.answered, a.refused = true, err != nil
	a.resolved <- err
	return true
}

// await is the request's side: the entry's resolution, or nil after
// entryWait.
func (a *spawnAnswer) await() error {
	t := time.NewTimer(entryWait)
	defer t.Stop()
	select {
	case err := <-a.resolved:
		return err
	case <-t.C:
	}
	a.mu.Lock()
	if !a.answered {
		a.answered = true
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	return <-a.resolved
}

// Ended sends a process started by spawn_on from another node its end
// (scheduler.Ender), unless its request was refused.
func (p *luaProcess) Ended(result payload.Payloads, err error) {
	if p.rt.answering.Load() == 0 {
		return
	}
	found, ok := p.rt.spawnAnswers.LoadAndDelete(p)
	if !ok {
		return
	}
	p.rt.answering.Add(-1)
	a := found.(*spawnAnswer)
	a.announce(nil) // ended before its entry resolved: the PID stands
	a.mu.Lock()
	refused := a.refused
	a.mu.Unlock()
	if refused || a.waiter == 0 {
		return
	}
	v := append([]any{true}, result...)
	if err != nil {
		v = []any{false, err.Error()}
	}
	serr := p.rt.sched.Send(p.pid, a.waiter, scheduler.RemoteCall{ID: endCallID, Reply: true, Value: v})
	if serr != nil && err == nil {
		v = []any{false, fmt.Sprintf("its results could not be sent: %v", serr)}
		p.rt.sched.Send(p.pid, a.waiter, scheduler.RemoteCall{ID: endCallID, Reply: true, Value: v})
	}
}

// watchRemote notes that waiter started pid on another node: it may wait
// for pid's end; the collector monitors pid quietly, to hear if its
// node goes away.
func (rt *Runtime) watchRemote(waiter, pid scheduler.PID) {
	rt.remoteEnds.claim(pid, waiter)
	rt.sched.MonitorQuietly(rt.remoteEnds.collector, pid)
}

// startCollector starts the runtime's endsProcess.
func (rt *Runtime) startCollector() error {
	h, err := rt.sched.Submit(endsProcess{rt}, "", nil)
	if err != nil {
		return fmt.Errorf("start the process that hears remote ends: %w", err)
	}
	rt.remoteEnds.collector = h.PID()
	return nil
}

// endsProcess is a clustered runtime's own process to which the other
// nodes send the ends of the processes this one's started there, and
// which monitors them: a Lua process blocked in process.wait does not
// take messages or downs, so they come here, always taken at once.
type endsProcess struct{ rt *Runtime }

func (endsProcess) Init(context.Context, string, payload.Payloads) error { return nil }
func (endsProcess) Close()                                               {}

func (e endsProcess) Step(events []scheduler.Event, out *scheduler.StepOutput) error {
	out.Status = scheduler.StatusReceive
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case scheduler.EventCancel:
			out.Status = scheduler.StatusDone
		case scheduler.EventMessage:
			if rc, ok := ev.Data.(scheduler.RemoteCall); ok && rc.Reply && rc.ID == endCallID {
				res, _ := rc.Value.([]any)
				e.rt.remoteEnds.end(ev.From, payload.Payloads(res), true)
			}
		case scheduler.EventDown:
			e.rt.remoteEnds.end(ev.From, downResult(ev), false)
		}
	}
	return nil
}

// downResult is the result of a process whose down came without its
// result (which comes first on the same path): its node went away, or
// the result was lost.
func downResult(ev *scheduler.Event) payload.Payloads {
	if errors.Is(ev.Error, scheduler.ErrNoConnection) {
		return payload.Payloads{false, "noconnection"}
	}
	return payload.Payloads{false, fmt.Sprintf("process %d ended and its result did not arrive: %s", ev.From, reasonText(ev.Error))}
}

// waitRemote is process.wait on a process of another node: one this
// process started with spawn_on.
func (p *luaProcess) waitRemote(L *lua.LState, pid scheduler.PID, timeout float64) int {
	e := p.rt.remoteEnds.of(pid, p.pid)
	if e == nil {
		L.Push(lua.LFalse)
		L.Push(lua.LString(fmt.Sprintf("no process %d (on another node, and not started by this process with process.spawn_on)", pid)))
		return 2
	}
	select {
	case <-e.done:
		p.rt.remoteEnds.take(pid, e)
		vals := p.resultValues(e.result, nil)
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
	return p.block(L, "process.wait", &request{kind: reqCommand, name: waitCommand, args: []any{pid, e, timeout}})
}

// waitInCluster is waitCommand's handler: it completes when the process
// ends, its node goes away, or the timeout passes.
func (rt *Runtime) waitInCluster(c scheduler.Call) error {
	pid, e, d := c.Args[0].(scheduler.PID), c.Args[1].(*remoteEnd), c.Args[2].(float64)
	go func() {
		var timeout <-chan time.Time
		if d >= 0 {
			t := time.NewTimer(time.Duration(d * float64(time.Second)))
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-e.done:
			rt.remoteEnds.take(pid, e)
			c.Complete(e.result)
		case <-timeout:
			c.Complete(payload.Payloads{nil, "timeout"})
		case <-c.Ctx.Done():
			c.Fail(context.Cause(c.Ctx))
		}
	}()
	return nil
}

// announceEntry tells a spawn request waiting for this process's entry
// how it resolved (entryErr, or found).
func (p *luaProcess) announceEntry() {
	if p.rt.answering.Load() == 0 {
		return
	}
	v, ok := p.rt.spawnAnswers.Load(p)
	if !ok {
		return
	}
	a := v.(*spawnAnswer)
	if p.procMore != nil && p.entryErr != nil {
		p.entryErr.answered = a.announce(p.entryErr)
		return
	}
	a.announce(nil)
}
