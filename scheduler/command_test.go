package scheduler

import (
	"testing"

	"github.com/luarun/luarun/payload"
)

// TestCommandAnsweredInHandler: a command dispatched from the step whose
// handler answers at once comes back from Command itself; no event and
// no further step follow.
func TestCommandAnsweredInHandler(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{"echo": echo})
	const n = 100
	steps := 0
	h := submitStep(t, s, func(events []Event, out *StepOutput) error {
		steps++
		if len(events) > 0 {
			t.Errorf("step %d got events %v", steps, events)
		}
		sum := int64(0)
		for i := range n {
			ev, ok := out.Command(uint64(i+1), "echo", payload.Payloads{int64(i)})
			if !ok || ev.Tag != uint64(i+1) || ev.Error != nil || ev.Type != EventYieldComplete {
				t.Fatalf("command %d: %+v, %v", i, ev, ok)
			}
			sum += ev.Data.(int64)
		}
		out.Status, out.Result = StatusDone, payload.Payloads{sum}
		return nil
	})
	res, err := wait(t, h)
	if err != nil || res[0] != int64(n*(n-1)/2) {
		t.Fatalf("%v, %v", res, err)
	}
	if steps != 1 {
		t.Errorf("%d steps, want 1", steps)
	}
	if st := s.Stats(); st.DroppedCompletions != 0 {
		t.Errorf("dropped completions: %d", st.DroppedCompletions)
	}
}

// TestCommandAnsweredLater: a handler that answers after returning makes
// Command report false; the answer comes as the tag's completion event.
func TestCommandAnsweredLater(t *testing.T) {
	calls := make(holder, 1)
	returned := make(chan struct{})
	s := newSched(t, 1, map[string]HandlerFunc{"held": calls.handle})
	h := submitStep(t, s, func(events []Event, out *StepOutput) error {
		if len(events) == 0 {
			if _, ok := out.Command(7, "held", nil); ok {
				t.Error("answered before anyone completed it")
			}
			close(returned)
			return nil // StatusYield: it waits for tag 7
		}
		if ev := events[0]; ev.Type != EventYieldComplete || ev.Tag != 7 || ev.Data != "late" {
			t.Errorf("event %+v", ev)
		}
		out.Status = StatusDone
		return nil
	})
	c := calls.next(t)
	<-returned // an answer before this could come back from Command itself
	if !c.Complete("late") {
		t.Fatal("the late answer was not delivered")
	}
	if _, err := wait(t, h); err != nil {
		t.Fatal(err)
	}
}

// TestCommandAnsweredTwice: the second answer of one command, given in
// its handler, is dropped and counted, as for any yield.
func TestCommandAnsweredTwice(t *testing.T) {
	twice := func(c Call) error {
		if !c.Complete(1) || c.Complete(2) {
			t.Error("want the first answer delivered, the second dropped")
		}
		return nil
	}
	s := newSched(t, 1, map[string]HandlerFunc{"twice": twice})
	h := submitStep(t, s, func(events []Event, out *StepOutput) error {
		ev, ok := out.Command(1, "twice", nil)
		if !ok || ev.Data != 1 {
			t.Errorf("%+v, %v", ev, ok)
		}
		out.Status = StatusDone
		return nil
	})
	if _, err := wait(t, h); err != nil {
		t.Fatal(err)
	}
	if d := s.Stats().DroppedCompletions; d != 1 {
		t.Errorf("dropped completions: %d, want 1", d)
	}
}

// TestAnswersRaceTheStep: answers from goroutines the handlers start
// race the step that dispatched them — with Command, its own decision
// to return the answer or leave it to an event; with Yield, the drain
// of the next step, which may find a push half done. Each answer
// arrives exactly once and none is dropped. With one P under -race the
// yield variant went round without end before park let a half-done
// push finish (worker.go: park's Gosched): 1.5M empty steps in 3 s.
func TestAnswersRaceTheStep(t *testing.T) {
	racing := func(c Call) error {
		go c.Complete(c.Args[0])
		return nil
	}
	for _, now := range []bool{true, false} {
		name := map[bool]string{true: "command", false: "yield"}[now]
		t.Run(name, func(t *testing.T) {
			s := newSched(t, 2, map[string]HandlerFunc{"racing": racing})
			const n = 20000
			got := make([]int, n)
			issued, answered := 0, 0
			take := func(i int64) {
				got[i]++
				answered++
			}
			h := submitStep(t, s, func(events []Event, out *StepOutput) error {
				for _, ev := range events {
					take(ev.Data.(int64))
				}
				for ; issued < n && issued-answered < 64; issued++ {
					tag := uint64(issued + 1)
					if !now {
						out.Yield(tag, "racing", int64(issued))
					} else if ev, ok := out.Command(tag, "racing", payload.Payloads{int64(issued)}); ok {
						take(ev.Data.(int64))
					}
				}
				if answered == n {
					out.Status = StatusDone
				}
				return nil
			})
			if _, err := wait(t, h); err != nil {
				t.Fatal(err)
			}
			for i, k := range got {
				if k != 1 {
					t.Fatalf("answer %d arrived %d times", i, k)
				}
			}
			if d := s.Stats().DroppedCompletions; d != 0 {
				t.Errorf("dropped completions: %d", d)
			}
		})
	}
}

// submitStep submits a process stepped by step.
func submitStep(t *testing.T, s *Scheduler, step func([]Event, *StepOutput) error) Handle {
	t.Helper()
	h, err := s.Submit(&fnProc{step: step}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
