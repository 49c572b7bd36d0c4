package scheduler

// Homed runs (home.go): Run steps a process on the calling goroutine
// from start to end — completions and messages from other goroutines
// bring it back there, not to a worker — and returns once it has ended,
// whatever ends it (its return, an error, Kill, its parent context,
// Shutdown, Shutdown's deadline, the watchdog's MaxStep); past the bound
// on inline runs it falls back to the workers.

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// runResult is what Run returned, for a Run on another goroutine.
type runResult struct {
	h   Handle
	err error
}

// goRun calls Run on a new goroutine; the channel gets its answer.
func goRun(s *Scheduler, p Process, opts SubmitOptions) <-chan runResult {
	ch := make(chan runResult, 1)
	go func() {
		h, err := s.Run(p, "main", nil, opts)
		ch <- runResult{h, err}
	}()
	return ch
}

// awaitRun is the answer of goRun, failing the test if it takes long.
func awaitRun(t *testing.T, ch <-chan runResult) (payload.Payloads, error) {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err, "Run")
		select {
		case <-r.h.Done():
		default:
			t.Fatal("Run returned before the process ended")
		}
		return r.h.Result()
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil, nil
	}
}

// TestRunCompletionsComeHome: a process whose commands are completed
// from other goroutines runs every step on Run's goroutine: no worker
// takes it, and Run returns its result.
func TestRunCompletionsComeHome(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{"later": func(c Call) error {
		go c.Complete(c.Args[0])
		return nil
	}})
	for range 50 {
		h, err := s.Run(yielder("later", 3), "main", nil, SubmitOptions{})
		require.NoError(t, err)
		res, err := h.Result()
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{int64(6)}, res)
	}
	st := s.Stats()
	require.EqualValues(t, 50, st.Completed)
	require.EqualValues(t, 50, st.Inline)
	require.EqualValues(t, 200, st.Steps)
	require.Zero(t, st.GlobalPops+st.LocalPops, "no worker took them")
}

// TestRunError: a step's error ends the process; Run reports it through
// the handle (Run's own error is for a submit that failed).
func TestRunError(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{"fail": func(c Call) error {
		go c.Fail(errors.New("no such row"))
		return nil
	}})
	h, err := s.Run(yielder("fail", 1), "main", nil, SubmitOptions{})
	require.NoError(t, err)
	_, err = h.Result()
	require.EqualError(t, err, "no such row")
	require.EqualValues(t, 1, s.Stats().Failed)

	_, err = s.Run(&fnProc{init: func(string, payload.Payloads) error {
		return errors.New("bad entry")
	}}, "main", nil, SubmitOptions{})
	require.EqualError(t, err, "bad entry")
}

// TestRunContinues: a process that asks to continue (StatusContinue)
// past the rerun budget comes back to its home each time.
func TestRunContinues(t *testing.T) {
	s := newSched(t, 1, nil)
	n := 0
	h, err := s.Run(&fnProc{step: func(_ []Event, out *StepOutput) error {
		if n++; n == 100 {
			out.Status = StatusDone
		} else {
			out.Status = StatusContinue
		}
		return nil
	}}, "main", nil, SubmitOptions{})
	require.NoError(t, err)
	_, err = h.Result()
	require.NoError(t, err)
	require.Equal(t, 100, n)
	st := s.Stats()
	require.Zero(t, st.GlobalPops+st.LocalPops)
}

// summer takes want messages, then returns their sum.
func summer(want int) *fnProc {
	var sum int64
	got := 0
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventMessage {
				sum += ev.Data.(int64)
				got++
			}
		}
		out.Status = StatusReceive
		if got == want {
			out.Status, out.Result = StatusDone, payload.Payloads{sum}
		}
		return nil
	}}
}

// TestRunReceivesMessages: a homed process waiting for messages is
// woken at home by a Send from Go and by a message another process's
// step sends (the step's hand-off, which would otherwise make it that
// worker's runnext).
func TestRunReceivesMessages(t *testing.T) {
	s := newSched(t, 2, nil)
	pids := make(chan PID, 1)
	p := summer(2)
	ch := make(chan runResult, 1)
	go func() {
		h, err := s.Run(&pidProc{fnProc: p, pids: pids}, "main", nil, SubmitOptions{})
		ch <- runResult{h, err}
	}()
	pid := <-pids
	require.NoError(t, s.Send(0, pid, int64(1)))
	sender, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		out.Status = StatusDone
		return out.Send(pid, int64(2))
	}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, sender)
	require.NoError(t, err)
	res, err := awaitRun(t, ch)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(3)}, res)
	require.EqualValues(t, 1, s.Stats().GlobalPops+s.Stats().LocalPops, "only the sender ran on a worker")
}

// pidProc is a fnProc that tells its PID at its first step (it is in
// the table by then).
type pidProc struct {
	*fnProc
	pids chan PID
}

func (p *pidProc) Step(evs []Event, out *StepOutput) error {
	if p.pids != nil {
		p.pids <- out.self
		p.pids = nil
	}
	return p.fnProc.Step(evs, out)
}

// holdOn yields hold and ends with its result, or with the reason of
// a cancel.
func holdOn() *fnProc {
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		if len(evs) == 0 {
			out.Yield(1, "hold")
			return nil
		}
		for _, ev := range evs {
			if ev.Type == EventCancel {
				return ev.Error
			}
		}
		out.Status = StatusDone
		return nil
	}}
}

// TestRunKilled: Kill, and the end of the parent context, end a homed
// process waiting for a command; Run returns with the kill's reason.
func TestRunKilled(t *testing.T) {
	calls := make(holder, 2)
	s := newSched(t, 1, map[string]HandlerFunc{"hold": calls.handle})
	ch := goRun(s, holdOn(), SubmitOptions{})
	c := calls.next(t)
	require.NoError(t, s.Kill(c.PID, errors.New("enough")))
	_, err := awaitRun(t, ch)
	require.EqualError(t, err, "enough")

	ctx, cancel := context.WithCancelCause(context.Background())
	ch = goRun(s, holdOn(), SubmitOptions{Context: ctx})
	calls.next(t)
	cancel(errors.New("client went away"))
	_, err = awaitRun(t, ch)
	require.EqualError(t, err, "client went away")
	st := s.Stats()
	require.EqualValues(t, 2, st.Killed)
	require.EqualValues(t, 0, st.LiveProcesses)
}

// TestRunShutdown: Shutdown cancels a homed process waiting for a
// command; Run returns with ErrShutdown and Shutdown with nil.
func TestRunShutdown(t *testing.T) {
	calls := make(holder, 1)
	reg := new(Registry)
	reg.Register("hold", calls.handle)
	s := New(Options{Workers: 1, Dispatcher: reg})
	ch := goRun(s, holdOn(), SubmitOptions{})
	calls.next(t)
	require.NoError(t, s.Shutdown(context.Background()))
	_, err := awaitRun(t, ch)
	require.ErrorIs(t, err, ErrShutdown)
	require.EqualValues(t, 1, s.Stats().Cancelled)
}

// trapper traps Shutdown's cancel and waits for a command it never
// gets.
type trapper struct{ *fnProc }

func (trapper) TrapsShutdown() bool { return true }

// TestRunAbandoned: a homed process that outlives Shutdown's deadline
// is abandoned, and its Run returns.
func TestRunAbandoned(t *testing.T) {
	calls := make(holder, 1)
	reg := new(Registry)
	reg.Register("hold", calls.handle)
	s := New(Options{Workers: 1, Dispatcher: reg})
	p := trapper{&fnProc{step: func(evs []Event, out *StepOutput) error {
		if len(evs) == 0 {
			out.Yield(1, "hold")
		}
		return nil // a cancel: keep waiting
	}}}
	ch := goRun(s, p, SubmitOptions{})
	calls.next(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var se *ShutdownError
	require.ErrorAs(t, s.Shutdown(ctx), &se)
	_, err := awaitRun(t, ch)
	require.ErrorIs(t, err, ErrAbandoned)
	require.EqualValues(t, 1, s.Stats().Abandoned)
}

// TestRunPastTheInlineBound: while every inline worker is busy, a homed
// process's steps run on the workers, and Run still returns its result.
func TestRunPastTheInlineBound(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{"later": func(c Call) error {
		go c.Complete(c.Args[0])
		return nil
	}})
	release := make(chan struct{})
	entered := make(chan struct{}, inlineSlots)
	var wg sync.WaitGroup
	for range inlineSlots { // hold every inline worker in a step
		wg.Go(func() {
			_, err := s.Run(&fnProc{step: func(_ []Event, out *StepOutput) error {
				entered <- struct{}{}
				<-release
				out.Status = StatusDone
				return nil
			}}, "main", nil, SubmitOptions{})
			if err != nil {
				t.Error(err)
			}
		})
	}
	for range inlineSlots {
		<-entered
	}
	h, err := s.Run(yielder("later", 2), "main", nil, SubmitOptions{})
	require.NoError(t, err)
	res, err := h.Result()
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(3)}, res)
	close(release)
	wg.Wait()
	st := s.Stats()
	// its steps ran on the worker, taken from the global queue: three
	// pops, or fewer when a completion came while the worker still ran
	// the step that yielded (the worker runs it again at once, no queue)
	require.GreaterOrEqual(t, st.GlobalPops, uint64(1), "its steps ran on the worker")
	require.LessOrEqual(t, st.GlobalPops, uint64(3))
	require.EqualValues(t, inlineSlots, st.Inline)
}

// TestRunMaxStep: the watchdog's step limit kills a homed process's
// step, and Run returns.
func TestRunMaxStep(t *testing.T) {
	s := New(Options{Workers: 1, MaxStep: 30 * time.Millisecond})
	defer s.Shutdown(context.Background())
	spin := newSpinner()
	ch := goRun(s, spin, SubmitOptions{})
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		_, err := r.h.Result()
		var sle *StepLimitError
		require.ErrorAs(t, err, &sle)
	case <-time.After(10 * time.Second):
		close(spin.stop) // let the step end, then fail
		<-ch
		t.Fatal("a homed step past MaxStep was not killed")
	}
	require.EqualValues(t, 1, s.Stats().StepLimited)
}

// TestRunConcurrent: many goroutines Run processes whose completions
// race their parks (completed at once, or from another goroutine),
// under -race: every one returns its own result and the counts add up.
func TestRunConcurrent(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{
		"now": echo,
		"later": func(c Call) error {
			go c.Complete(c.Args[0])
			return nil
		},
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				cmd := "now"
				if (g+i)%2 == 0 {
					cmd = "later"
				}
				h, err := s.Run(yielder(cmd, 4), "main", nil, SubmitOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				if res, err := h.Result(); err != nil || res[0] != int64(10) {
					t.Errorf("got %v, %v", res, err)
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	require.EqualValues(t, 800, st.Completed)
	require.EqualValues(t, 0, st.LiveProcesses)
}

// reusable yields one command ("nil", answered with nil), then ends;
// Init resets it, so one value serves many runs without allocating.
type reusable struct{ steps int }

func (p *reusable) Init(context.Context, string, payload.Payloads) error { p.steps = 0; return nil }
func (p *reusable) Close()                                               {}
func (p *reusable) Step(_ []Event, out *StepOutput) error {
	if p.steps++; p.steps == 1 {
		out.Yield(1, "nil")
	} else {
		out.Status = StatusDone
	}
	return nil
}

// TestRunAllocations: a Run whose process waits for one command costs
// the process's record and the queue node its completion leaves behind:
// its home is recycled, and its first yield's record has room in the
// process.
func TestRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := newSched(t, 1, map[string]HandlerFunc{"nil": func(c Call) error {
		c.Complete(nil)
		return nil
	}})
	p := new(reusable)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := s.Run(p, "main", nil, SubmitOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0)
	// a parent context that may be done costs nothing more: the home
	// and the watchdog watch it (watchParent), no context.AfterFunc
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	allocs = testing.AllocsPerRun(1000, func() {
		if _, err := s.Run(p, "main", nil, SubmitOptions{Context: ctx}); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0, "with a parent context")
}

// TestRunParentKillsSpinningStep: the end of the parent context kills a
// homed process whose step spins on Run's goroutine — found by the
// watchdog (the home runs the step), or, with the watchdog off, by the
// context.AfterFunc registered instead.
func TestRunParentKillsSpinningStep(t *testing.T) {
	for name, slice := range map[string]time.Duration{"watchdog": 0, "no watchdog": -1} {
		t.Run(name, func(t *testing.T) {
			s := New(Options{Workers: 1, Slice: slice})
			defer s.Shutdown(context.Background())
			ctx, cancel := context.WithCancelCause(context.Background())
			spin := newSpinner()
			ch := goRun(s, spin, SubmitOptions{Context: ctx})
			<-spin.started
			cancel(errors.New("client went away"))
			select {
			case r := <-ch:
				require.NoError(t, r.err)
				_, err := r.h.Result()
				require.EqualError(t, err, "client went away")
			case <-time.After(10 * time.Second):
				close(spin.stop) // let the step end, then fail
				<-ch
				t.Fatal("a homed step spinning past its parent's end was not killed")
			}
			require.EqualValues(t, 1, s.Stats().Killed)
		})
	}
}

// doneSpy is a parent context that counts the calls of its Done.
type doneSpy struct {
	context.Context
	calls atomic.Int32
}

func (c *doneSpy) Done() <-chan struct{} {
	c.calls.Add(1)
	return c.Context.Done()
}

// TestRunNeverWaitingLeavesParentDoneAlone: a homed process whose
// commands are answered in their handlers never waits, and its home never
// asks its parent context for the Done channel (which a cancelCtx makes
// on first use: an allocation per request for an embedder); one that
// waits does ask, and is killed when the parent ends.
func TestRunNeverWaitingLeavesParentDoneAlone(t *testing.T) {
	calls := make(holder, 1)
	s := newSched(t, 1, map[string]HandlerFunc{
		"now":  func(c Call) error { c.Complete(c.Args[0]); return nil },
		"hold": calls.handle,
	})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	spy := &doneSpy{Context: ctx}
	h, err := s.Run(yielder("now", 3), "main", nil, SubmitOptions{Context: spy})
	require.NoError(t, err)
	res, err := h.Result()
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(6)}, res)
	require.Zero(t, spy.calls.Load(), "Done asked of the parent of a run that never waited")

	ch := goRun(s, holdOn(), SubmitOptions{Context: spy})
	calls.next(t)
	require.Eventually(t, func() bool { return spy.calls.Load() > 0 }, time.Minute, time.Millisecond,
		"the home of a waiting run watches its parent")
	cancel(errors.New("client went away"))
	_, err = awaitRun(t, ch)
	require.EqualError(t, err, "client went away")
}

// TestRunTakesAnAnswerReadyOnItsP: a handler that answers from a
// goroutine it starts (an embedder's store lookup) has that goroutine
// run before the home blocks: the home lets its P run it first
// (yieldFirst) and finds the answer without parking, and so without
// asking its parent context for a Done channel. With one P the
// goroutine is next in line; a stray preemption may still make a home
// wait, so most runs, not all, must have found the answer.
func TestRunTakesAnAnswerReadyOnItsP(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's runtime puts a new goroutine next in line only half the time")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s := newSched(t, 1, map[string]HandlerFunc{"later": func(c Call) error {
		go c.Complete(c.Args[0])
		return nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const runs = 100
	waited := 0
	for range runs {
		spy := &doneSpy{Context: ctx}
		h, err := s.Run(yielder("later", 2), "main", nil, SubmitOptions{Context: spy})
		require.NoError(t, err)
		res, err := h.Result()
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{int64(3)}, res)
		if spy.calls.Load() > 0 {
			waited++
		}
	}
	require.Less(t, waited, runs/2, "runs whose home blocked for an answer a goroutine of its P had ready")
}
