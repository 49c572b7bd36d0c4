package scheduler

// Tests of nested steps (nested.go): the reply taken inside the
// caller's step, the budget, one level only, order with what was queued
// before, and exact counts when the nested process or the caller ends.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// adder answers each message n (an int64) with n+1 to its sender; with
// extra, it sends a second message, -n, right after. It ends at a cancel
// (Shutdown's).
func adder(extra bool) *nestableProc {
	return nestStep(func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventCancel {
				out.Status = StatusDone
				return nil
			}
			n := ev.Data.(int64)
			if err := out.Send(ev.From, n+1); err != nil {
				return err
			}
			if extra {
				if err := out.Send(ev.From, -n); err != nil {
					return err
				}
			}
		}
		out.Status = StatusReceive
		return nil
	})
}

// nestableProc is a fnProc that may run nested (Preempter); it counts
// the requests to step aside, which its step function may read.
type nestableProc struct {
	fnProc
	preempts atomic.Int32
}

func (p *nestableProc) Preempt() { p.preempts.Add(1) }

// nestStep is a nestableProc running step.
func nestStep(step func(evs []Event, out *StepOutput) error) *nestableProc {
	return &nestableProc{fnProc: fnProc{step: step}}
}

// nestedSched is a one-worker scheduler whose watchdog never acts (a
// loaded machine must not see it empty the handed slot), and a waiting
// adder on it.
func nestedSched(t *testing.T, extra bool) (*Scheduler, Handle) {
	t.Helper()
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	srv, err := s.Submit(adder(extra), "main", nil)
	require.NoError(t, err)
	waitIdle(t, srv)
	return s, srv
}

// TestRunHandedTakesTheReply: one step sends to a waiting process and
// takes its answer, nestedBudget times; past the budget the answer comes
// with the caller's next step, as it would without nesting. Every step
// and hand-off is counted.
func TestRunHandedTakesTheReply(t *testing.T) {
	s, srv := nestedSched(t, false)
	var got []int64
	steps := 0
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		steps++
		if steps == 2 { // the answer to the send past the budget
			require.Len(t, evs, 1)
			got = append(got, evs[0].Data.(int64))
			out.Status, out.Result = StatusDone, nil
			return nil
		}
		for i := int64(1); ; i++ {
			require.NoError(t, out.Send(srv.PID(), 10*i))
			from, msg, ran, replied := out.RunHanded()
			if !ran {
				require.EqualValues(t, nestedBudget+1, i, "ran until the budget")
				out.Status = StatusReceive
				return nil
			}
			require.True(t, replied)
			require.Equal(t, srv.PID(), from)
			got = append(got, msg.(int64))
		}
	}), "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	want := []int64{}
	for i := int64(1); i <= nestedBudget+1; i++ {
		want = append(want, 10*i+1)
	}
	require.Equal(t, want, got)
	require.NoError(t, s.Shutdown(context.Background()))
	st := s.Stats()
	// The adder's first step, its nestedBudget nested steps, the one
	// after the caller's and the one that takes Shutdown's cancel; the
	// caller's two.
	require.EqualValues(t, 1+nestedBudget+1+1+2, st.Steps, "%+v", st)
	// Every send found its receiver waiting or nesting: the caller's
	// nestedBudget+1 hand-offs, the adder's nestedBudget replies and its
	// last answer handed to the caller waiting in receive.
	require.EqualValues(t, 2*(nestedBudget+1), st.HandOffs, "%+v", st)
	require.Zero(t, st.DroppedMessages)
}

// TestRunHandedReplyFirstThenQueued: the first message the nested step
// sends its caller is the reply; a second one queues behind it and comes
// with the caller's next step, in order.
func TestRunHandedReplyFirstThenQueued(t *testing.T) {
	s, srv := nestedSched(t, true)
	var got []int64
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			got = append(got, ev.Data.(int64))
			out.Status = StatusDone
			return nil
		}
		require.NoError(t, out.Send(srv.PID(), int64(5)))
		_, msg, ran, replied := out.RunHanded()
		require.True(t, ran && replied)
		got = append(got, msg.(int64))
		out.Status = StatusReceive
		return nil
	}), "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	require.Equal(t, []int64{6, -5}, got)
}

// TestRunHandedNotWithAnEventWaiting: with a message already queued for
// the caller in its step, no nested step runs (the caller would not
// wait); the answer comes after the queued message.
func TestRunHandedNotWithAnEventWaiting(t *testing.T) {
	s, srv := nestedSched(t, false)
	started, sent := make(chan struct{}), make(chan struct{})
	var got []any
	first := true
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			got = append(got, ev.Data)
		}
		out.Status = StatusReceive
		if len(got) == 2 {
			out.Status = StatusDone
		}
		if !first {
			return nil
		}
		first = false
		close(started)
		<-sent // a message waits in this process's queue
		if err := out.Send(srv.PID(), int64(1)); err != nil {
			return err
		}
		if _, _, ran, _ := out.RunHanded(); ran {
			return fmt.Errorf("a nested step ran with a message waiting for its caller")
		}
		return nil
	}), "main", nil)
	require.NoError(t, err)
	<-started
	require.NoError(t, s.Send(0, h.PID(), "first"))
	close(sent)
	_, err = wait(t, h)
	require.NoError(t, err)
	require.Equal(t, []any{"first", int64(2)}, got)
}

// TestRunHandedReleasedByAMessage: a message that comes for the caller
// while its nested step runs asks the nested process to step aside
// (Preempt); the one here does, with StatusContinue, before answering.
// The caller's receive gets no reply, its next step takes the message,
// and the answer, from the nested process's next step, comes after it.
func TestRunHandedReleasedByAMessage(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	running := make(chan PID, 1)
	var guest *nestableProc
	asked := -1 // the request it was answering when asked to step aside
	guest = nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			if ev.Type == EventCancel {
				out.Status = StatusDone
				return nil
			}
			if asked >= 0 { // resumed after stepping aside: answer now
				return out.Send(PID(asked), "answer")
			}
			running <- ev.From
			for guest.preempts.Load() == 0 {
				time.Sleep(time.Millisecond) // until the caller's message asks it
			}
			asked = int(ev.From)
			out.Status = StatusContinue
			// A continued step gets no new event for the request: keep it.
			return out.Send(out.self, ev.Data)
		}
		return nil
	})
	g, err := s.Submit(guest, "main", nil)
	require.NoError(t, err)
	waitIdle(t, g)
	var got []any
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			got = append(got, ev.Data)
		}
		if len(got) == 2 {
			out.Status = StatusDone
		}
		if len(got) > 0 {
			return nil
		}
		require.NoError(t, out.Send(g.PID(), "request"))
		_, _, ran, replied := out.RunHanded()
		if !ran || replied {
			return fmt.Errorf("ran %v, replied %v: want a nested step that stepped aside", ran, replied)
		}
		return nil
	}), "main", nil)
	require.NoError(t, err)
	caller := <-running
	require.Equal(t, h.PID(), caller)
	require.NoError(t, s.Send(0, h.PID(), "from Go"))
	_, err = wait(t, h)
	require.NoError(t, err)
	require.Equal(t, []any{"from Go", "answer"}, got)
	require.EqualValues(t, 1, guest.preempts.Load())
}

// TestRunHandedOneLevel: a nested step runs no nested step of its own;
// what it handed a message to runs after the caller's step.
func TestRunHandedOneLevel(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	lastRan := make(chan struct{})
	last, err := s.Submit(closeOnMessage(lastRan), "main", nil)
	require.NoError(t, err)
	waitIdle(t, last)
	middle, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		if len(evs) == 0 {
			return nil
		}
		require.NoError(t, out.Send(last.PID(), "on"))
		_, _, ran, _ := out.RunHanded()
		require.False(t, ran, "a nested step ran another")
		out.Status = StatusDone
		return nil
	}), "main", nil)
	require.NoError(t, err)
	waitIdle(t, middle)
	h, err := s.Submit(nestStep(func(_ []Event, out *StepOutput) error {
		require.NoError(t, out.Send(middle.PID(), "go"))
		_, _, ran, replied := out.RunHanded()
		require.True(t, ran)
		require.False(t, replied)
		select {
		case <-lastRan:
			t.Error("the process the nested step handed a message to ran inside this step")
		default:
		}
		out.Status = StatusDone
		return nil
	}), "main", nil)
	require.NoError(t, err)
	for _, p := range []Handle{h, middle, last} {
		_, err = wait(t, p)
		require.NoError(t, err)
	}
	<-lastRan
}

// TestRunHandedEnds: a nested step that ends its process (returning, or
// panicking) ends it as any step would; the caller's step goes on.
func TestRunHandedEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		step func(evs []Event, out *StepOutput) error
	}{
		{"returns", func(evs []Event, out *StepOutput) error {
			out.Status = StatusReceive
			if len(evs) > 0 {
				out.Status, out.Result = StatusDone, nil
			}
			return nil
		}},
		{"panics", func(evs []Event, out *StepOutput) error {
			out.Status = StatusReceive
			if len(evs) > 0 {
				panic("nested")
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Workers: 1, Slice: time.Hour})
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			nested, err := s.Submit(nestStep(tc.step), "main", nil)
			require.NoError(t, err)
			waitIdle(t, nested)
			h, err := s.Submit(nestStep(func(_ []Event, out *StepOutput) error {
				require.NoError(t, out.Send(nested.PID(), "x"))
				_, _, ran, replied := out.RunHanded()
				require.True(t, ran)
				require.False(t, replied)
				select {
				case <-nested.Done(): // ended inside this step
				default:
					t.Error("the nested process has not ended")
				}
				out.Status = StatusDone
				return nil
			}), "main", nil)
			require.NoError(t, err)
			_, err = wait(t, h)
			require.NoError(t, err)
			_, err = wait(t, nested)
			if tc.name == "panics" {
				var pe *PanicError
				require.ErrorAs(t, err, &pe)
			} else {
				require.NoError(t, err)
			}
			require.NoError(t, s.Shutdown(context.Background()))
			st := s.Stats()
			require.EqualValues(t, 2, st.Submitted)
			require.EqualValues(t, st.Submitted, st.Completed+st.Failed)
			require.Zero(t, st.DroppedMessages)
		})
	}
}

// TestRunHandedCallerKilled: a kill of the caller while its nested step
// runs is seen at the caller's next step; the answer, queued behind the
// kill, is counted as dropped with it.
func TestRunHandedCallerKilled(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	reason := errors.New("killed while nesting")
	killer, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			if ev.Type == EventCancel {
				return ev.Error
			}
			// The caller, whose step runs this one: killed, then answered.
			if err := s.Kill(ev.From, reason); err != nil {
				return err
			}
			if err := out.Send(ev.From, "answer"); err != nil {
				return err
			}
		}
		return nil
	}), "main", nil)
	require.NoError(t, err)
	waitIdle(t, killer)
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for i, ev := range evs { // the kill, then the answer
			if ev.Type == EventCancel {
				out.Backlog = len(evs) - i - 1 // unread: dropped with the process
				return ev.Error
			}
		}
		if err := out.Send(killer.PID(), "x"); err != nil {
			return err
		}
		if _, _, ran, replied := out.RunHanded(); !ran || replied {
			return fmt.Errorf("ran %v, replied %v: the answer must queue behind the kill", ran, replied)
		}
		return nil
	}), "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.ErrorIs(t, err, reason)
	require.NoError(t, s.Kill(killer.PID(), reason))
	_, _ = wait(t, killer)
	require.NoError(t, s.Shutdown(context.Background()))
	st := s.Stats()
	require.EqualValues(t, 2, st.Killed)
	require.EqualValues(t, 1, st.DroppedMessages, "%+v", st)
}
