package scheduler

// A Dispatcher that panics inside StepOutput.Command, in a Step that
// recovers the panic and goes on: the command's record must not stay
// "awaited", or an answer given later (Complete reports it delivered) is
// kept for a Command that has gone, and the process never gets it.

import (
	"testing"
)

// panickingDispatcher hands each call to calls (having answered it
// "early" first if early), then panics.
type panickingDispatcher struct {
	calls chan Call
	early bool
}

func (d panickingDispatcher) Dispatch(c Call) {
	if d.early {
		c.Complete("early")
	}
	d.calls <- c
	panic("dispatcher bug")
}

// answerAfterPanic runs a process whose first Command panics (recovered
// by the step, which waits for tag 1), answers the call with answer, and
// returns the event the process got.
func answerAfterPanic(t *testing.T, early bool, answer func(c Call) bool) Event {
	d := panickingDispatcher{calls: make(chan Call, 1), early: early}
	s := New(Options{Workers: 1, Dispatcher: d})
	t.Cleanup(func() { s.Shutdown(t.Context()) })
	got := make(chan Event, 1)
	h, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
		if len(events) > 0 {
			got <- events[0]
			out.Status = StatusDone
			return nil
		}
		func() {
			defer func() { recover() }()
			out.Command(1, "boom", nil)
		}()
		return nil // StatusYield: it waits for tag 1
	}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := <-d.calls
	if !answer(c) {
		t.Fatal("the answer was not delivered")
	}
	if _, err := wait(t, h); err != nil {
		t.Fatal(err)
	}
	return <-got
}

// TestCommandAnswerAfterDispatchPanic: the answer given after the panic
// comes as the tag's event.
func TestCommandAnswerAfterDispatchPanic(t *testing.T) {
	ready := make(chan Call)
	done := make(chan bool)
	go func() { c := <-ready; done <- c.Complete("late") }()
	ev := answerAfterPanic(t, false, func(c Call) bool {
		ready <- c
		return <-done
	})
	if ev.Type != EventYieldComplete || ev.Tag != 1 || ev.Data != "late" {
		t.Errorf("event %+v", ev)
	}
}

// TestCommandAnswerBeforeDispatchPanic: an answer given in the dispatch,
// before the panic, comes as the tag's event too.
func TestCommandAnswerBeforeDispatchPanic(t *testing.T) {
	ev := answerAfterPanic(t, true, func(c Call) bool {
		return !c.Complete("second") // the second answer is dropped
	})
	if ev.Type != EventYieldComplete || ev.Tag != 1 || ev.Data != "early" {
		t.Errorf("event %+v", ev)
	}
}
