package scheduler

// The one deferred recover around a worker's loop (catchStep,
// worker.go): a panic escaping a step ends only that process on every
// kind of run — a worker's loop, an inline run and its follow-ups, a
// homed step (Run), a watchdog helper, an inline run nested in another
// process's step — and the scheduler's counts after it are those of a
// step that returned the same error.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// panicker is a process whose first step panics.
func panicker() *fnProc {
	return &fnProc{step: func([]Event, *StepOutput) error { panic("step exploded") }}
}

// returns is a process whose first step ends it with v.
func returns(v any) *fnProc {
	return &fnProc{step: func(_ []Event, out *StepOutput) error {
		out.Status, out.Result = StatusDone, payload.Payloads{v}
		return nil
	}}
}

// requirePanicked waits for h and checks it ended with the step's panic.
func requirePanicked(t *testing.T, h Handle) {
	t.Helper()
	_, err := wait(t, h)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "step exploded", pe.Value)
	require.Contains(t, string(pe.Stack), "panicker", "the stack has the panicking frames")
}

// TestPanicInInlineStep: an inline step that panics ends its process;
// SubmitWith returns normally, and the inline worker is given back (every
// later inline submit still runs inline, past the bound of inline
// workers a one-worker scheduler makes).
func TestPanicInInlineStep(t *testing.T) {
	s := newSched(t, 1, nil)
	const runs = 3 * inlineSlots
	for range runs {
		h, _, err := s.SubmitWith(panicker(), "main", nil, SubmitOptions{Waited: true, Inline: true})
		require.NoError(t, err)
		select {
		case <-h.Done():
		default:
			t.Fatal("the panicking inline process had not ended when SubmitWith returned")
		}
		requirePanicked(t, h)
	}
	st := s.Stats()
	require.EqualValues(t, runs, st.Inline, "every run was inline: the workers were given back")
	require.EqualValues(t, runs, st.Failed)
	require.EqualValues(t, runs, st.Steps)
}

// TestPanicInInlineFollowUp: a process an inline step wakes runs as a
// follow-up on the submitting goroutine; its panic ends it alone, and the
// submitted process goes on waiting (cancelled by Shutdown at the end).
func TestPanicInInlineFollowUp(t *testing.T) {
	reg := new(Registry)
	s := New(Options{Workers: 2, Dispatcher: reg, Slice: time.Hour})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	bomb, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventMessage {
				panic("follow-up exploded")
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	waitIdle(t, bomb)
	sent := false
	h, _, err := s.SubmitWith(&fnProc{step: func(events []Event, out *StepOutput) error {
		for _, ev := range events {
			if ev.Type == EventCancel {
				out.Status = StatusDone
				return nil
			}
		}
		if !sent {
			sent = true
			if err := out.Send(bomb.PID(), "light"); err != nil {
				return err
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "main", nil, SubmitOptions{Waited: true, Inline: true})
	require.NoError(t, err)
	_, err = wait(t, bomb)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "follow-up exploded", pe.Value)
	select {
	case <-h.Done():
		t.Fatal("the submitted process ended with its follow-up's panic")
	default:
	}
}

// TestPanicInHomedStep: a panic in a step Run makes on its own goroutine
// ends that process; Run returns normally with its error, and the next
// Run on the same scheduler runs homed again.
func TestPanicInHomedStep(t *testing.T) {
	s := newSched(t, 1, nil)
	for range 2 {
		_, err := awaitRun(t, goRun(s, panicker(), SubmitOptions{}))
		var pe *PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "step exploded", pe.Value)
	}
	res, err := awaitRun(t, goRun(s, returns("after"), SubmitOptions{}))
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"after"}, res)
	require.EqualValues(t, 3, s.Stats().Inline)
}

// TestPanicOnHelper: with the one worker stuck in a long step, the
// watchdog's helper runs what is queued; a panic in a step there ends
// that process alone, and the helper runs the next one.
func TestPanicOnHelper(t *testing.T) {
	reg := new(Registry)
	s := New(Options{Workers: 1, Dispatcher: reg, Slice: 5 * time.Millisecond})
	release := make(chan struct{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	started := make(chan struct{})
	stuck, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		close(started)
		<-release
		out.Status = StatusDone
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	<-started
	defer close(release)
	h, err := s.Submit(panicker(), "main", nil)
	require.NoError(t, err)
	requirePanicked(t, h)
	next, err := s.Submit(returns("after"), "main", nil)
	require.NoError(t, err)
	res, err := wait(t, next)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"after"}, res)
	select {
	case <-stuck.Done():
		t.Fatal("the stuck step ended before its release")
	default:
	}
	require.NotZero(t, s.Stats().Helpers, "a helper ran them")
}

// TestPanicInInlineRunInsideAStep: a step that submits Inline from Go
// code (Scheduler.SubmitWith, not StepOutput: the inline worker is
// another) runs the child on its own goroutine; the child's panic ends
// the child alone and the parent's step goes on; a parent that panics
// after the child's inline run ended ends alone, the child's result
// kept.
func TestPanicInInlineRunInsideAStep(t *testing.T) {
	s := newSched(t, 1, nil)
	var child Handle
	parent, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		var err error
		child, _, err = s.SubmitWith(panicker(), "main", nil, SubmitOptions{Waited: true, Inline: true})
		out.Status, out.Result = StatusDone, payload.Payloads{"parent went on"}
		return err
	}}, "main", nil)
	require.NoError(t, err)
	res, err := wait(t, parent)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"parent went on"}, res)
	requirePanicked(t, child)

	parent, err = s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		child, _, _ = s.SubmitWith(returns("child"), "main", nil, SubmitOptions{Waited: true, Inline: true})
		panic("parent exploded")
	}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, parent)
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "parent exploded", pe.Value)
	res, err = wait(t, child)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"child"}, res)
	require.EqualValues(t, 2, s.Stats().Inline)
}

// mailboxRun runs, on a scheduler with a mailbox limit (messages
// counted), a process that waits for a message and ends by end() in the
// step that takes it, with a second message queued behind (dropped). It
// returns the scheduler's counts once the process has ended.
func mailboxRun(t *testing.T, end func() error) Stats {
	reg := new(Registry)
	s := New(Options{Workers: 1, Dispatcher: reg, MaxMailbox: 100})
	defer s.Shutdown(context.Background())
	took, release := make(chan struct{}), make(chan struct{})
	h, err := s.Submit(&fnProc{step: func(events []Event, out *StepOutput) error {
		if len(events) == 0 {
			out.Status = StatusReceive
			return nil
		}
		close(took)
		<-release // the second message queues behind
		return end()
	}}, "main", nil)
	require.NoError(t, err)
	waitIdle(t, h)
	require.NoError(t, s.Send(0, h.PID(), "a"))
	<-took
	require.NoError(t, s.Send(0, h.PID(), "b"))
	close(release)
	_, err = wait(t, h)
	require.Error(t, err)
	return s.Stats()
}

// TestPanicCountsAsError: the counts after a step that panicked are those
// after a step that returned an error (Steps, Failed, dropped messages).
func TestPanicCountsAsError(t *testing.T) {
	returned := mailboxRun(t, func() error { return errors.New("nope") })
	panicked := mailboxRun(t, func() error { panic("nope") })
	require.Equal(t, returned.Steps, panicked.Steps, "Steps")
	require.Equal(t, returned.Failed, panicked.Failed, "Failed")
	require.Equal(t, returned.DroppedMessages, panicked.DroppedMessages, "DroppedMessages")
	require.Equal(t, returned.Completed, panicked.Completed, "Completed")
}

// nilHandlingProc is a PanicHandler whose StepPanicked returns nil.
type nilHandlingProc struct{ fnProc }

func (*nilHandlingProc) StepPanicked(any) error { return nil }

// TestPanicHandlerNilIsStillAFailure: a step that panicked is a failure
// whatever its PanicHandler returns (a nil from StepPanicked once ended
// the process as one that completed).
func TestPanicHandlerNilIsStillAFailure(t *testing.T) {
	s := newSched(t, 1, nil)
	h, err := s.Submit(&nilHandlingProc{fnProc{step: func([]Event, *StepOutput) error {
		panic("step exploded")
	}}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.Error(t, err, "a panicked step ended its process as a success")
	require.EqualValues(t, 1, s.Stats().Failed)
}
