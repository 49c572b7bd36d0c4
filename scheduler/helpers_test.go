package scheduler

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/luarun/luarun/payload"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fnProc adapts a step function to Process.
type fnProc struct {
	init   func(method string, in payload.Payloads) error
	step   func(events []Event, out *StepOutput) error
	closed atomic.Int32
}

func (p *fnProc) Init(_ context.Context, method string, in payload.Payloads) error {
	if p.init != nil {
		return p.init(method, in)
	}
	return nil
}

func (p *fnProc) Step(events []Event, out *StepOutput) error { return p.step(events, out) }
func (p *fnProc) Close()                                     { p.closed.Add(1) }

// newSched starts a scheduler with the given handlers and shuts it down
// (checking that nothing was abandoned) when the test ends.
func newSched(t testing.TB, workers int, handlers map[string]HandlerFunc) *Scheduler {
	reg := new(Registry)
	for name, h := range handlers {
		reg.Register(name, h)
	}
	s := New(Options{Workers: workers, Dispatcher: reg})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

func wait(t testing.TB, h Handle) (payload.Payloads, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.Wait(ctx)
	if err == context.DeadlineExceeded {
		t.Fatalf("process %d did not end", h.PID())
	}
	return res, err
}

// echo completes at once with its first argument.
func echo(c Call) error {
	c.Complete(c.Args[0])
	return nil
}

// holder collects calls without completing them.
type holder chan Call

func (h holder) handle(c Call) error {
	h <- c
	return nil
}

func (h holder) next(t testing.TB) Call {
	t.Helper()
	select {
	case c := <-h:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no call arrived")
		return Call{}
	}
}

// dump describes a stuck process and the scheduler's queues, for failures.
func dump(s *Scheduler, h Handle) string {
	p := h.p
	st := p.state.Load()
	out := fmt.Sprintf("process %d: state %d flags %#x outstanding %d pending-events %v\n",
		p.pid, st&stateMask, st&^stateMask, len(p.outstanding), p.events.Pending())
	for _, r := range p.outstanding {
		out += fmt.Sprintf("  yield tag %d token %d gen %d\n", r.tag, r.token.Load(), r.gen)
	}
	s.idle.mu.Lock()
	out += fmt.Sprintf("global %d, nspinning %d, nsleeping %d, tokens %d\n",
		s.global.n.Load(), s.idle.nspinning.Load(), s.idle.nsleeping.Load(), s.idle.wakeTokens)
	s.idle.mu.Unlock()
	for _, w := range s.workers {
		out += fmt.Sprintf("worker %d: local %d\n", w.id, w.local.Len())
	}
	return out + fmt.Sprintf("%+v", s.Stats())
}
