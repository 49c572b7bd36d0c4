package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/luarun/luarun/payload"
	"github.com/stretchr/testify/require"
)

func TestDoneInFirstStep(t *testing.T) {
	s := newSched(t, 2, nil)
	p := &fnProc{step: func(_ []Event, out *StepOutput) error {
		out.Status = StatusDone
		out.Result = payload.Payloads{"hi", int64(2)}
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	res, err := wait(t, h)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"hi", int64(2)}, res)
	require.EqualValues(t, 1, p.closed.Load())
	require.Greater(t, h.PID(), PID(0))
}

func TestInitErrorAndPIDs(t *testing.T) {
	s := newSched(t, 1, nil)
	bad := &fnProc{init: func(m string, _ payload.Payloads) error {
		return fmt.Errorf("no entry %q (have: main, other)", m)
	}}
	_, err := s.Submit(bad, "nope", nil)
	require.EqualError(t, err, `no entry "nope" (have: main, other)`)
	require.Zero(t, bad.closed.Load(), "Close is for processes that were submitted")

	seen := map[PID]bool{}
	for range 100 {
		h, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
			out.Status = StatusDone
			return nil
		}}, "main", nil)
		require.NoError(t, err)
		require.False(t, seen[h.PID()], "PID reused")
		seen[h.PID()] = true
		wait(t, h)
	}
}

// yielder yields n commands one after another, summing the int64 results.
func yielder(cmd string, n int) *fnProc {
	var sum int64
	sent := 0
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type != EventYieldComplete {
				continue
			}
			if ev.Error != nil {
				return ev.Error
			}
			sum += ev.Data.(int64)
		}
		if sent == n {
			out.Status = StatusDone
			out.Result = payload.Payloads{sum}
			return nil
		}
		sent++
		out.Yield(uint64(sent), cmd, int64(sent))
		return nil
	}}
}

func TestYieldSyncAndAsync(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{
		"echo": echo,
		"async": func(c Call) error {
			go c.Complete(c.Args[0])
			return nil
		},
		"later": func(c Call) error {
			time.AfterFunc(time.Millisecond, func() { c.Complete(c.Args[0]) })
			return nil
		},
	})
	for _, cmd := range []string{"echo", "async", "later"} {
		h, err := s.Submit(yielder(cmd, 20), "main", nil)
		require.NoError(t, err)
		res, err := wait(t, h)
		require.NoError(t, err, cmd)
		require.Equal(t, payload.Payloads{int64(20 * 21 / 2)}, res, cmd)
	}
}

func TestSeveralYieldsInOneStep(t *testing.T) {
	hold := make(holder, 3)
	s := newSched(t, 1, map[string]HandlerFunc{"hold": hold.handle})
	var got []uint64
	p := &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			got = append(got, ev.Tag)
		}
		switch len(got) {
		case 0:
			out.Yield(10, "hold")
			out.Yield(20, "hold")
			out.Yield(30, "hold")
		case 3:
			out.Status = StatusDone
		}
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	a, b, c := hold.next(t), hold.next(t), hold.next(t)
	c.Complete(nil) // any order
	a.Complete(nil)
	b.Complete(nil)
	_, err = wait(t, h)
	require.NoError(t, err)
	require.ElementsMatch(t, []uint64{10, 20, 30}, got)
}

func TestCommandErrors(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{
		"fails":  func(Call) error { return errors.New("disk on fire") },
		"panics": func(Call) error { panic("boom") },
	})
	run := func(cmd string) error {
		var got error
		p := &fnProc{step: func(evs []Event, out *StepOutput) error {
			if len(evs) == 0 {
				out.Yield(1, cmd)
				return nil
			}
			got = evs[0].Error
			out.Status = StatusDone
			return nil
		}}
		h, err := s.Submit(p, "main", nil)
		require.NoError(t, err)
		_, err = wait(t, h)
		require.NoError(t, err, "a command error goes to the process, not the scheduler")
		return got
	}
	err := run("nope")
	require.ErrorIs(t, err, ErrUnknownCommand)
	require.EqualError(t, err, `unknown command "nope"`)
	require.EqualError(t, run("fails"), "fails: disk on fire")
	err = run("panics")
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.EqualError(t, err, "panic in command panics: boom")
	// The worker survived all of it.
	h, err := s.Submit(yielder("nope", 0), "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
}

func TestStepPanicAndError(t *testing.T) {
	s := newSched(t, 1, nil)
	p := &fnProc{step: func([]Event, *StepOutput) error { panic("step exploded") }}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.EqualError(t, err, fmt.Sprintf("panic in process %d: step exploded", h.PID()))
	require.EqualValues(t, 1, p.closed.Load())

	q := &fnProc{step: func([]Event, *StepOutput) error { return errors.New("nope") }}
	h, err = s.Submit(q, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.EqualError(t, err, "nope")
	require.EqualValues(t, 2, s.Stats().Failed)
}

// receiver waits for n messages, then returns them in order.
func receiver(n int) *fnProc {
	var got []any
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventMessage {
				got = append(got, ev.Data)
			}
		}
		if len(got) >= n {
			out.Status = StatusDone
			out.Result = got
			return nil
		}
		out.Status = StatusReceive
		return nil
	}}
}

func TestMessageWhileIdle(t *testing.T) {
	s := newSched(t, 2, nil)
	h, err := s.Submit(receiver(3), "main", nil)
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, s.Send(0, h.PID(), int64(i)))
	}
	res, err := wait(t, h)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(0), int64(1), int64(2)}, res)
}

func TestSendErrors(t *testing.T) {
	s := newSched(t, 1, nil)
	require.ErrorIs(t, s.Send(0, 12345, "x"), ErrNoProcess)
	h, err := s.Submit(yielder("x", 0), "main", nil)
	require.NoError(t, err)
	wait(t, h)
	err = s.Send(0, h.PID(), "x")
	require.ErrorIs(t, err, ErrNoProcess)
	require.EqualError(t, err, fmt.Sprintf("send to %d: no such process", h.PID()))
	require.ErrorIs(t, s.Kill(h.PID(), nil), ErrNoProcess)
}

// TestMessageWhileRunning: a message that arrives during the step that
// ends in StatusReceive must wake the process (flagMessage).
func TestMessageWhileRunning(t *testing.T) {
	s := newSched(t, 1, nil)
	inStep, sent := make(chan struct{}), make(chan struct{})
	var got any
	p := &fnProc{step: func(evs []Event, out *StepOutput) error {
		if len(evs) == 0 {
			close(inStep)
			<-sent // the message lands while this step runs
			out.Status = StatusReceive
			return nil
		}
		got = evs[0].Data
		out.Status = StatusDone
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	<-inStep
	require.NoError(t, s.Send(0, h.PID(), "ping"))
	close(sent)
	_, err = wait(t, h)
	require.NoError(t, err)
	require.Equal(t, "ping", got)
}

// TestMessageWhileBlocked: a message does not wake a process waiting for a
// completion; it arrives with the step the completion triggers.
func TestMessageWhileBlocked(t *testing.T) {
	hold := make(holder, 1)
	s := newSched(t, 1, map[string]HandlerFunc{"hold": hold.handle})
	var steps [][]EventType
	p := &fnProc{step: func(evs []Event, out *StepOutput) error {
		var kinds []EventType
		for _, ev := range evs {
			kinds = append(kinds, ev.Type)
		}
		steps = append(steps, kinds)
		if len(steps) == 1 {
			out.Yield(1, "hold")
			return nil
		}
		out.Status = StatusDone
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	c := hold.next(t)
	require.NoError(t, s.Send(0, h.PID(), "m1"))
	require.NoError(t, s.Send(0, h.PID(), "m2"))
	time.Sleep(20 * time.Millisecond) // give a wrong wakeup time to happen
	require.True(t, c.Complete("done"))
	_, err = wait(t, h)
	require.NoError(t, err)
	require.Equal(t, [][]EventType{nil, {EventMessage, EventMessage, EventYieldComplete}}, steps)
}

// TestCompleteWhileRunning: a completion delivered during dispatch, while
// the worker still owns the process, must not be lost (flagWoken).
func TestCompleteWhileRunning(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{
		"racy": func(c Call) error {
			go c.Complete(int64(1)) // races the worker's park
			return nil
		},
	})
	for range 200 {
		h, err := s.Submit(yielder("racy", 50), "main", nil)
		require.NoError(t, err)
		res, err := wait(t, h)
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{int64(50)}, res)
	}
}

func TestKillCancelsInFlightCommand(t *testing.T) {
	cancelled := make(chan error, 1)
	inFlight := make(chan struct{})
	s := newSched(t, 1, map[string]HandlerFunc{
		"forever": func(c Call) error {
			close(inFlight)
			go func() {
				<-c.Ctx.Done()
				cancelled <- context.Cause(c.Ctx)
				c.Fail(context.Cause(c.Ctx))
			}()
			return nil
		},
	})
	started := false
	p := &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventCancel {
				return fmt.Errorf("killed: %w", ev.Error)
			}
		}
		if !started {
			started = true
			out.Yield(1, "forever")
		}
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	// not a 5 ms sleep: a kill before the first step would end p before it
	// yields, no command would be in flight, and <-cancelled would hang
	<-inFlight
	reason := errors.New("enough")
	require.NoError(t, s.Kill(h.PID(), reason))
	_, err = wait(t, h)
	require.ErrorIs(t, err, reason)
	require.EqualError(t, err, "killed: enough")
	require.ErrorIs(t, <-cancelled, reason)
}

// TestStaleAndDoubleCompletions: a completion after its process ended, or a
// second one for the same yield, is dropped and counted, and never reaches
// the process that now uses the same record and node.
func TestStaleAndDoubleCompletions(t *testing.T) {
	hold := make(holder, 1)
	s := newSched(t, 1, map[string]HandlerFunc{"hold": hold.handle})

	// First process: one yield, answered; keep its completer.
	h1, err := s.Submit(yielder("hold", 1), "main", nil)
	require.NoError(t, err)
	c1 := hold.next(t)
	require.True(t, c1.Complete(int64(7)))
	require.False(t, c1.Complete(int64(8)), "second completion of one yield")
	res, err := wait(t, h1)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(7)}, res)
	require.EqualValues(t, 1, s.Stats().DroppedCompletions)

	// Second process: with one worker its yield reuses the same record.
	h2, err := s.Submit(yielder("hold", 1), "main", nil)
	require.NoError(t, err)
	c2 := hold.next(t)
	require.Same(t, c1.rec, c2.rec, "test premise: the record is reused")
	require.False(t, c1.Complete(int64(666)), "stale completer on a reused record")
	require.EqualValues(t, 2, s.Stats().DroppedCompletions)
	require.True(t, c2.Complete(int64(2)))
	res, err = wait(t, h2)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(2)}, res, "the stale value never arrived")

	// Third: the process is killed while its yield is outstanding; the
	// late completion is dropped.
	p3 := &fnProc{step: func(evs []Event, out *StepOutput) error {
		if len(evs) > 0 && evs[0].Type == EventCancel {
			return evs[0].Error
		}
		out.Yield(1, "hold")
		return nil
	}}
	h3, err := s.Submit(p3, "main", nil)
	require.NoError(t, err)
	c3 := hold.next(t)
	require.NoError(t, s.Kill(h3.PID(), errors.New("bye")))
	_, err = wait(t, h3)
	require.EqualError(t, err, "bye")
	require.False(t, c3.Complete(int64(1)))
	require.EqualValues(t, 3, s.Stats().DroppedCompletions)
}

// TestFairness: with one worker, a process that always asks to continue
// does not starve the others.
func TestFairness(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{"echo": echo})
	var stop atomic.Bool
	spinner := &fnProc{step: func(_ []Event, out *StepOutput) error {
		if stop.Load() {
			out.Status = StatusDone
			return nil
		}
		out.Status = StatusContinue
		return nil
	}}
	hs, err := s.Submit(spinner, "main", nil)
	require.NoError(t, err)
	hy, err := s.Submit(yielder("echo", 1000), "main", nil)
	require.NoError(t, err)
	_, err = wait(t, hy)
	require.NoError(t, err)
	stop.Store(true)
	_, err = wait(t, hs)
	require.NoError(t, err)
}

func TestStatsCount(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{"echo": echo})
	h, err := s.Submit(yielder("echo", 10), "main", nil)
	require.NoError(t, err)
	wait(t, h)
	st := s.Stats()
	require.EqualValues(t, 1, st.Submitted)
	require.GreaterOrEqual(t, st.Steps, uint64(11))
	require.GreaterOrEqual(t, st.LocalPops+st.GlobalPops, uint64(1))
	require.Zero(t, st.LiveProcesses)
}

func TestStepOutputSendOnlyInStep(t *testing.T) {
	s := newSched(t, 1, nil)
	var kept *StepOutput
	rcv, err := s.Submit(receiver(1), "main", nil)
	require.NoError(t, err)
	h, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		kept = out
		require.ErrorIs(t, out.Send(999999, "x"), ErrNoProcess)
		out.Status = StatusDone
		return out.Send(rcv.PID(), "hi")
	}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	res, err := wait(t, rcv)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"hi"}, res)
	require.EqualError(t, kept.Send(rcv.PID(), "late"), "StepOutput.Send called outside Step")
}

// TestLocalWakeupsDoNotStarve: on one worker, two processes that keep
// waking each other through the deque's LIFO end must not starve a third
// process queued below them on the same deque.
func TestLocalWakeupsDoNotStarve(t *testing.T) {
	s := newSched(t, 1, nil)
	var thirdDone atomic.Bool
	third, err := s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
		if len(evs) == 0 {
			out.Status = StatusReceive
			return nil
		}
		thirdDone.Store(true)
		out.Status = StatusDone
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond) // third is Idle
	// bounce replies to whoever sent it the ball; the kicker starts the
	// rally after waking third onto this deque.
	bounce := func(kickTo PID) *fnProc {
		var peer PID
		started := false
		return &fnProc{step: func(evs []Event, out *StepOutput) error {
			for _, ev := range evs {
				if ev.Data == "stop" {
					out.Status = StatusDone
					return nil
				}
				peer = ev.From
			}
			if thirdDone.Load() && peer != 0 {
				out.Status = StatusDone
				return out.Send(peer, "stop")
			}
			out.Status = StatusReceive
			if kickTo != 0 && !started {
				started = true
				if err := out.Send(third.PID(), "go"); err != nil {
					return err
				}
				return out.Send(kickTo, "ball")
			}
			if len(evs) > 0 {
				return out.Send(peer, "ball")
			}
			return nil
		}}
	}
	hb, err := s.Submit(bounce(0), "main", nil)
	require.NoError(t, err)
	ha, err := s.Submit(bounce(hb.PID()), "main", nil)
	require.NoError(t, err)
	_, err = wait(t, third)
	require.NoError(t, err)
	wait(t, ha)
	wait(t, hb)
}

func TestStepOutputSpawn(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{"echo": echo})
	var kids []Handle
	var kept *StepOutput
	parent := &fnProc{step: func(_ []Event, out *StepOutput) error {
		kept = out
		for range 50 {
			h, err := out.Spawn(yielder("echo", 3), "main", nil)
			if err != nil {
				return err
			}
			kids = append(kids, h)
		}
		_, err := out.Spawn(&fnProc{init: func(string, payload.Payloads) error {
			return errors.New("bad child")
		}}, "main", nil)
		require.EqualError(t, err, "bad child")
		out.Status = StatusDone
		return nil
	}}
	h, err := s.Submit(parent, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	for _, k := range kids {
		res, err := wait(t, k)
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{int64(6)}, res)
	}
	_, err = kept.Spawn(yielder("echo", 1), "main", nil)
	require.EqualError(t, err, "StepOutput.Spawn called outside Step")
}

// handlingProc is a fnProc that makes its own error of a panic that
// escapes its step (PanicHandler).
type handlingProc struct {
	fnProc
	stack string // debug.Stack() when StepPanicked was called
}

func (p *handlingProc) StepPanicked(v any) error {
	p.stack = string(debug.Stack())
	return fmt.Errorf("handled: %v", v)
}

// TestPanicHandlerStep: a panic escaping a PanicHandler's step ends it
// with the handler's error (not the worker's PanicError), asked while
// the panicking frames are still on the stack; the step's yields are
// dropped, its StepOutput refuses sends once the step is over, and the
// one worker goes on to run the next process.
func TestPanicHandlerStep(t *testing.T) {
	s := newSched(t, 1, nil)
	var kept *StepOutput
	p := &handlingProc{fnProc: fnProc{step: func(_ []Event, out *StepOutput) error {
		kept = out
		out.Yield(1, "never.dispatched", nil)
		panic("step exploded")
	}}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.EqualError(t, err, "handled: step exploded")
	require.Contains(t, p.stack, "TestPanicHandlerStep")
	require.EqualValues(t, 1, p.closed.Load())
	require.ErrorIs(t, kept.Send(h.PID(), "late"), errSendOutsideStep)
	h2, err := s.Submit(returns("after"), "main", nil)
	require.NoError(t, err)
	res, err := wait(t, h2)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"after"}, res)
}
