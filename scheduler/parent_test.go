package scheduler

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/luarun/luarun/payload"
)

type parentKey struct{}

// TestSubmitOptionsContext: the values of SubmitOptions.Context are those
// of Init's context and of every Call.Ctx, its cancellation is not theirs
// until the kill it makes, and that kill ends the process with
// KillReason of the cause.
func TestSubmitOptionsContext(t *testing.T) {
	calls := make(holder, 1)
	s := newSched(t, 1, map[string]HandlerFunc{"held": calls.handle})
	var initValue any
	p := &fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventCancel {
				return ev.Error
			}
		}
		if len(events) == 0 {
			out.Yield(1, "held")
		}
		out.Status = StatusYield
		return nil
	}}
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), parentKey{}, "v"))
	proc := &ctxProc{fnProc: p, seen: &initValue}
	h, _, err := s.SubmitWith(proc, "", nil, SubmitOptions{Context: parent, KillReason: func(cause error) error {
		return fmt.Errorf("parent ended: %w", cause)
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := calls.next(t)
	if got := c.Ctx.Value(parentKey{}); got != "v" || initValue != "v" {
		t.Fatalf("the parent's value: Call.Ctx has %v, Init's context %v", got, initValue)
	}
	if PIDFrom(c.Ctx) != h.PID() {
		t.Fatalf("Call.Ctx names PID %d, not %d", PIDFrom(c.Ctx), h.PID())
	}
	gone := errors.New("gone")
	cancel(gone)
	_, err = wait(t, h)
	if !errors.Is(err, gone) || err.Error() != "parent ended: gone" {
		t.Fatalf("ended with %v, want the parent's kill", err)
	}
	<-c.Ctx.Done() // the command's context ends with the kill
	if !errors.Is(context.Cause(c.Ctx), gone) {
		t.Fatalf("the command's context's cause is %v", context.Cause(c.Ctx))
	}
}

// ctxProc records the parent's value as Init's context has it.
type ctxProc struct {
	*fnProc
	seen *any
}

func (p *ctxProc) Init(ctx context.Context, method string, in payload.Payloads) error {
	*p.seen = ctx.Value(parentKey{})
	return nil
}
