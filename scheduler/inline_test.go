package scheduler

// Inline runs (inline.go): the first steps on the submitting goroutine,
// the process an ordinary one afterwards, sends and spawns from an
// inline step reaching the workers, the bound on inline runs at once,
// and the watchdog's step limit reaching an inline step.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestInlineRunsOnTheCaller: a process submitted Inline that ends in its
// first step has ended when SubmitWith returns, without a worker.
func TestInlineRunsOnTheCaller(t *testing.T) {
	s := newSched(t, 2, nil)
	for i := 1; i <= 100; i++ {
		h, _, err := s.SubmitWith(&fnProc{step: func(_ []Event, out *StepOutput) error {
			out.Status, out.Result = StatusDone, payload.Payloads{int64(i)}
			return nil
		}}, "main", nil, SubmitOptions{Waited: true, Inline: true})
		require.NoError(t, err)
		select {
		case <-h.Done():
		default:
			t.Fatalf("process %d still running after an inline submit", i)
		}
		res, err := h.Result()
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{int64(i)}, res)
	}
	st := s.Stats()
	require.EqualValues(t, 100, st.Inline)
	require.EqualValues(t, 100, st.Completed)
	require.Zero(t, st.GlobalPops+st.LocalPops, "no worker took them")
}

// TestInlineThenWorkers: an inline process that yields is an ordinary
// process afterwards: its completion (from another goroutine) queues it
// for a worker, which finishes it.
func TestInlineThenWorkers(t *testing.T) {
	calls := make(holder, 1)
	s := newSched(t, 2, map[string]HandlerFunc{"hold": calls.handle})
	h, _, err := s.SubmitWith(yielder("hold", 1), "main", nil, SubmitOptions{Inline: true})
	require.NoError(t, err)
	c := calls.next(t)
	select {
	case <-h.Done():
		t.Fatal("ended before its command completed")
	default:
	}
	go c.Complete(int64(1))
	_, err = wait(t, h)
	require.NoError(t, err)
	st := s.Stats()
	require.EqualValues(t, 1, st.Inline)
	require.EqualValues(t, 1, st.GlobalPops, "a worker ran its second step")
}

// TestInlineSendAndSpawnReachWorkers: a process an inline step spawns
// runs on the workers, and one it wakes with a message runs (as its
// follow-up on the submitting goroutine, or on a worker).
func TestInlineSendAndSpawnReachWorkers(t *testing.T) {
	s := newSched(t, 2, nil)
	got := make(chan any, 1)
	receiver, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventMessage {
				got <- ev.Data
				out.Status = StatusDone
				return nil
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	var child Handle
	h, _, err := s.SubmitWith(&fnProc{step: func(_ []Event, out *StepOutput) error {
		var err error
		child, err = out.Spawn(&fnProc{step: func(_ []Event, out *StepOutput) error {
			out.Status = StatusDone
			return nil
		}}, "main", nil)
		if err != nil {
			return err
		}
		out.Status = StatusDone
		return out.Send(receiver.PID(), "hi")
	}}, "main", nil, SubmitOptions{Inline: true})
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	_, err = wait(t, child)
	require.NoError(t, err)
	_, err = wait(t, receiver)
	require.NoError(t, err)
	require.Equal(t, "hi", <-got)
}

// TestInlineBounded: while every inline worker is busy, an Inline submit
// queues the process for the workers instead.
func TestInlineBounded(t *testing.T) {
	s := newSched(t, 1, nil)
	release := make(chan struct{})
	entered := make(chan struct{}, inlineSlots)
	var wg sync.WaitGroup
	for range inlineSlots { // hold every inline worker in a step
		wg.Go(func() {
			_, _, err := s.SubmitWith(&fnProc{step: func(_ []Event, out *StepOutput) error {
				entered <- struct{}{}
				<-release
				out.Status = StatusDone
				return nil
			}}, "main", nil, SubmitOptions{Inline: true})
			if err != nil {
				t.Error(err)
			}
		})
	}
	for range inlineSlots {
		<-entered
	}
	h, _, err := s.SubmitWith(yielder("none", 0), "main", nil, SubmitOptions{Inline: true})
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	close(release)
	wg.Wait()
	st := s.Stats()
	require.EqualValues(t, inlineSlots, st.Inline)
	require.EqualValues(t, 1, st.GlobalPops, "the one past the bound ran on the worker")
}

// TestInlineIgnoredInsideAStep: SpawnWith asking for Inline from a step
// queues the child on the worker (no step inside a step).
func TestInlineIgnoredInsideAStep(t *testing.T) {
	s := newSched(t, 1, nil)
	var child Handle
	h, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		var err error
		child, _, err = out.SpawnWith(yielder("none", 0), "main", nil, SubmitOptions{Inline: true})
		out.Status = StatusDone
		return err
	}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	_, err = wait(t, child)
	require.NoError(t, err)
	require.Zero(t, s.Stats().Inline)
}

// TestInlineMaxStep: the watchdog watches inline steps too: one past
// MaxStep is killed with a *StepLimitError.
func TestInlineMaxStep(t *testing.T) {
	s := New(Options{Workers: 1, MaxStep: 30 * time.Millisecond})
	spin := newSpinner()
	done := make(chan Handle, 1)
	go func() { // the step runs on this goroutine until the limit kills it
		h, _, err := s.SubmitWith(spin, "main", nil, SubmitOptions{Inline: true})
		if err != nil {
			t.Error(err)
		}
		done <- h
	}()
	var h Handle
	select {
	case h = <-done:
	case <-time.After(10 * time.Second):
		close(spin.stop) // let the step end, then fail
		<-done
		t.Fatal("an inline step past MaxStep was not killed")
	}
	defer s.Shutdown(context.Background())
	_, err := wait(t, h)
	var sle *StepLimitError
	require.ErrorAs(t, err, &sle)
	st := s.Stats()
	require.EqualValues(t, 1, st.Inline)
	require.EqualValues(t, 1, st.StepLimited)
}

// TestInlineRunsTheProcessesItWakes: a call and its reply run on the
// submitting goroutine. The inline step sends to an idle echo process
// and waits; the echo's step (the inline worker's runnext) runs when the
// caller has parked, its reply makes the caller its runnext, and the
// caller's last step runs too: the caller has ended when SubmitWith
// returns, and no worker was woken or took a process. Before, the echo
// went to the global queue and a worker ran both.
func TestInlineRunsTheProcessesItWakes(t *testing.T) {
	reg := new(Registry)
	// a watchdog (it takes an inline worker's runnext from a long step)
	// that never ticks within the test
	s := New(Options{Workers: 2, Dispatcher: reg, Slice: time.Hour})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	echo, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventCancel { // Shutdown, at the test's end
				out.Status = StatusDone
				return nil
			}
			if ev.Type == EventMessage {
				if err := out.Send(ev.From, ev.Data); err != nil {
					return err
				}
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	waitIdle(t, echo)
	before := s.Stats()
	sent := false
	h, _, err := s.SubmitWith(&fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventMessage {
				out.Status, out.Result = StatusDone, payload.Payloads{ev.Data}
				return nil
			}
		}
		if !sent {
			sent = true
			if err := out.Send(echo.PID(), "ping"); err != nil {
				return err
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "main", nil, SubmitOptions{Waited: true, Inline: true})
	require.NoError(t, err)
	select {
	case <-h.Done():
	default:
		t.Fatal("the caller had not ended when SubmitWith returned")
	}
	res, err := h.Result()
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"ping"}, res)
	after := s.Stats()
	require.Equal(t, before.Wakeups, after.Wakeups, "workers woken")
	require.Equal(t, before.GlobalPops+before.LocalPops, after.GlobalPops+after.LocalPops, "processes a worker took")
}

// TestInlineLeavesWhatItWokeOnceEnded: a process that an inline step
// wakes runs on the submitting goroutine only while the submitted
// process waits. One that sends work to a process and ends returns at
// once; the work's step (held here until the submit has returned) runs
// on a worker.
func TestInlineLeavesWhatItWokeOnceEnded(t *testing.T) {
	reg := new(Registry)
	s := New(Options{Workers: 2, Dispatcher: reg, Slice: time.Hour})
	release := make(chan struct{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	worker, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventMessage {
				<-release // a long step
				out.Status = StatusDone
				return nil
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	waitIdle(t, worker)
	submitted := make(chan Handle, 1)
	go func() {
		h, _, err := s.SubmitWith(&fnProc{step: func(_ []Event, out *StepOutput) error {
			out.Status = StatusDone
			return out.Send(worker.PID(), "job")
		}}, "main", nil, SubmitOptions{Waited: true, Inline: true})
		if err != nil {
			t.Error(err)
		}
		submitted <- h
	}()
	select {
	case h := <-submitted:
		_, err := h.Result()
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the submit ran the step of the process it woke after it had ended")
	}
	close(release)
	_, err = wait(t, worker)
	require.NoError(t, err)
}

// waitIdle waits until h's process waits for messages (Idle). The
// minute bounds only a hang: its first step may wait behind a loaded
// machine's other work.
func waitIdle(t *testing.T, h Handle) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); h.p.state.Load()&stateMask != stateIdle; {
		require.True(t, time.Now().Before(deadline), "process %d never waited for messages", h.PID())
		time.Sleep(time.Millisecond)
	}
}
