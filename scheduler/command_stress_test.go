package scheduler

// A stress test of StepOutput.Command's answer protocol: handlers that
// answer at once, from goroutines, twice, or by failing, for processes
// that some killer ends at any point. Every completion a handler gives is
// either taken by its process (returned from Command, or as an event)
// exactly once, or counted in DroppedCompletions: none is lost, none
// duplicated, none reaches another tag.

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/luarun/luarun/payload"
)

func TestCommandAnswersConserved(t *testing.T) {
	var given, goroutines sync.WaitGroup
	var calls atomic.Int64 // Complete and Fail calls
	answer := func(c Call, i int64) {
		calls.Add(1)
		if i%5 == 4 {
			c.Fail(errors.New("no"))
			return
		}
		c.Complete(i)
	}
	later := func(c Call, i int64) {
		goroutines.Add(1)
		go func() { defer goroutines.Done(); answer(c, i) }()
	}
	mix := func(c Call) error {
		i := c.Args[0].(int64)
		switch i % 6 {
		case 0:
			answer(c, i)
		case 1:
			later(c, i)
		case 2:
			answer(c, i)
			answer(c, i)
		case 3:
			later(c, i)
			later(c, i)
		case 4:
			answer(c, i)
			later(c, i)
		case 5:
			later(c, i)
			answer(c, i)
		}
		return nil
	}
	s := newSched(t, 4, map[string]HandlerFunc{"mix": mix})
	const procs, n = 64, 600
	var taken atomic.Int64 // completions the processes took
	var handles []Handle
	for k := range procs {
		got := map[uint64]int64{}
		issued, answered := 0, 0
		take := func(ev Event) {
			taken.Add(1)
			i := int64(ev.Tag) - 1 + int64(k)
			if _, dup := got[ev.Tag]; dup {
				t.Errorf("process %d: tag %d answered twice", k, ev.Tag)
			}
			if ev.Error == nil && ev.Data != i || ev.Error != nil && i%5 != 4 {
				t.Errorf("process %d: tag %d got %+v", k, ev.Tag, ev)
			}
			got[ev.Tag] = i
			answered++
		}
		h, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
			cancelled := false
			for _, ev := range events {
				if ev.Type == EventCancel {
					cancelled = true
				} else {
					take(ev)
				}
			}
			if cancelled {
				out.Status = StatusDone
				return nil
			}
			for ; issued < n && issued-answered < 8; issued++ {
				i := int64(issued + k)
				if ev, ok := out.Command(uint64(issued+1), "mix", payload.Payloads{i}); ok {
					take(ev)
				}
			}
			if answered == n {
				out.Status = StatusDone
			}
			return nil
		}}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
	}
	given.Add(1)
	go func() { // kills every fourth process, at whatever point it is
		defer given.Done()
		for k := 0; k < procs; k += 4 {
			s.Kill(handles[k].PID(), errors.New("killed"))
		}
	}()
	for _, h := range handles {
		wait(t, h)
	}
	given.Wait()
	goroutines.Wait()
	st := s.Stats()
	// A completion the process took is one handler call; one it did not
	// take was counted dropped (by its completer, or by the end of its
	// process).
	if got, want := taken.Load()+int64(st.DroppedCompletions), calls.Load(); got != want {
		t.Errorf("taken %d + dropped %d = %d, want the %d answers given", taken.Load(), st.DroppedCompletions, got, want)
	}
}
