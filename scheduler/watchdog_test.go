package scheduler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// spinner is a process whose first step is a CPU loop: it runs until its
// context is done or stop is closed, then returns the context's cause (or
// ends normally). A second step ends it.
type spinner struct {
	ctx     context.Context
	stop    chan struct{}
	started chan struct{}
	steps   int
	slow    atomic.Int32 // SlowStep calls, when used as a SlowStepper
}

func newSpinner() *spinner {
	return &spinner{stop: make(chan struct{}), started: make(chan struct{})}
}

func (p *spinner) Init(ctx context.Context, _ string, _ payload.Payloads) error {
	p.ctx = ctx
	return nil
}

func (p *spinner) Step(_ []Event, out *StepOutput) error {
	p.steps++
	if p.steps > 1 {
		out.Status = StatusDone
		return nil
	}
	close(p.started)
	for {
		select {
		case <-p.ctx.Done():
			return context.Cause(p.ctx)
		case <-p.stop:
			out.Status = StatusContinue
			return nil
		default:
		}
	}
}

func (p *spinner) Close() {}

// slowSpinner is a spinner that reports its own slow steps.
type slowSpinner struct{ *spinner }

func (p slowSpinner) SlowStep(time.Duration) { p.slow.Add(1) }

// TestBusyStepDoesNotStarveOthers: with one worker busy in a loop that
// only the test can end, other processes still run to their end — on a
// helper the watchdog starts.
func TestBusyStepDoesNotStarveOthers(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{"echo": echo})
	spin := newSpinner()
	hs, err := s.Submit(spin, "main", nil)
	require.NoError(t, err)
	<-spin.started
	for range 3 {
		h, err := s.Submit(yielder("echo", 20), "main", nil)
		require.NoError(t, err)
		_, err = wait(t, h)
		require.NoError(t, err, "a process behind the busy one ran")
	}
	require.GreaterOrEqual(t, s.Stats().Helpers, uint64(1))
	close(spin.stop)
	_, err = wait(t, hs)
	require.NoError(t, err)
}

// TestMaxStepKillsTheStep: a step past MaxStep ends its process with a
// *StepLimitError, counted as killed and step-limited.
func TestMaxStepKillsTheStep(t *testing.T) {
	s := New(Options{Workers: 2, MaxStep: 30 * time.Millisecond})
	defer s.Shutdown(context.Background())
	spin := newSpinner()
	h, err := s.Submit(spin, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, h)
	var sle *StepLimitError
	require.ErrorAs(t, err, &sle)
	require.Equal(t, h.PID(), sle.PID)
	require.Equal(t, 30*time.Millisecond, sle.Limit)
	st := s.Stats()
	require.EqualValues(t, 1, st.StepLimited)
	require.EqualValues(t, 1, st.Killed)
	require.Zero(t, st.Failed)
}

// TestSlowStepReportedOnce: a slow step is reported once per process, to
// the process if it is a SlowStepper, else through Warn. With MaxStep set
// (here too long to act), every slow step is, even one that keeps no
// other process waiting.
func TestSlowStepReportedOnce(t *testing.T) {
	var mu sync.Mutex
	var warned []PID
	s := New(Options{Workers: 2, SlowStep: 20 * time.Millisecond, MaxStep: time.Hour, Warn: func(pid PID, msg string) {
		mu.Lock()
		warned = append(warned, pid)
		mu.Unlock()
	}})
	defer s.Shutdown(context.Background())

	plain, own := newSpinner(), slowSpinner{newSpinner()}
	hp, err := s.Submit(plain, "main", nil)
	require.NoError(t, err)
	ho, err := s.Submit(own, "main", nil)
	require.NoError(t, err)
	// wait for both reports, not for SlowSteps: the watchdog counts a
	// slow step before it reports it
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(warned) > 0 && own.slow.Load() > 0
	}, 20*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // more ticks: still once
	close(plain.stop)
	close(own.stop)
	_, err = wait(t, hp)
	require.NoError(t, err)
	_, err = wait(t, ho)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []PID{hp.PID()}, warned)
	require.EqualValues(t, 1, own.slow.Load())
	require.EqualValues(t, 2, s.Stats().SlowSteps)
}

// TestSlowStepOnlyWhenOthersWait: without MaxStep, a slow step is
// reported only if processes were queued behind it while it ran: a lone
// one (a batch computation) is not, one with a process waiting behind it
// on the only worker is.
func TestSlowStepOnlyWhenOthersWait(t *testing.T) {
	var mu sync.Mutex
	var warned []PID
	s := New(Options{Workers: 1, SlowStep: 20 * time.Millisecond, Warn: func(pid PID, msg string) {
		mu.Lock()
		warned = append(warned, pid)
		mu.Unlock()
	}})
	defer s.Shutdown(context.Background())

	lone := newSpinner()
	hl, err := s.Submit(lone, "main", nil)
	require.NoError(t, err)
	<-lone.started
	time.Sleep(200 * time.Millisecond) // ten times SlowStep: a slower machine only ticks less
	close(lone.stop)
	_, err = wait(t, hl)
	require.NoError(t, err)
	require.Zero(t, s.Stats().SlowSteps, "a lone step delays nobody")

	busy, behind := newSpinner(), newSpinner()
	hb, err := s.Submit(busy, "main", nil)
	require.NoError(t, err)
	<-busy.started
	hw, err := s.Submit(behind, "main", nil) // queued: the only worker is busy
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(warned) > 0
	}, 20*time.Second, time.Millisecond)
	close(busy.stop)
	close(behind.stop)
	for _, h := range []Handle{hb, hw} {
		_, err = wait(t, h)
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, hb.PID(), warned[0])
}

// TestShutdownStopsABusyStep: Shutdown cancels the context of a process
// in a long step at once; it ends with ErrShutdown, counted as cancelled,
// long before the grace period.
func TestShutdownStopsABusyStep(t *testing.T) {
	s := New(Options{Workers: 1})
	spin := newSpinner()
	h, err := s.Submit(spin, "main", nil)
	require.NoError(t, err)
	<-spin.started
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	_, err = h.Result()
	require.ErrorIs(t, err, ErrShutdown)
	st := s.Stats()
	require.EqualValues(t, 1, st.Cancelled)
	require.Zero(t, st.Failed+st.Abandoned)
}

// TestWatchdogOff: Slice < 0 runs no watchdog: no helper, no limit.
func TestWatchdogOff(t *testing.T) {
	s := New(Options{Workers: 2, Slice: -1, MaxStep: time.Millisecond})
	spin := newSpinner()
	h, err := s.Submit(spin, "main", nil)
	require.NoError(t, err)
	<-spin.started
	time.Sleep(20 * time.Millisecond)
	close(spin.stop)
	_, err = wait(t, h)
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	require.Zero(t, s.Stats().Helpers+s.Stats().StepLimited)
	require.False(t, errors.Is(err, ErrShutdown))
}

// TestShutdownTwice: a second Shutdown (a deferred one after an explicit
// one) returns at once.
func TestShutdownTwice(t *testing.T) {
	s := New(Options{Workers: 2})
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, s.Shutdown(context.Background()))
}

// TestKillRacingShutdownCountedOnce: a process that gets Kill's cancel
// and Shutdown's at once is counted by the one it ended with (only the
// first cancel reaches it), never as failed.
func TestKillRacingShutdownCountedOnce(t *testing.T) {
	for round := range 100 {
		s := New(Options{Workers: 2})
		var hs []Handle
		for range 50 {
			h, err := s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
				for _, ev := range evs {
					if ev.Type == EventCancel {
						return ev.Error
					}
				}
				out.Status = StatusReceive
				return nil
			}}, "", nil)
			require.NoError(t, err)
			hs = append(hs, h)
		}
		kill := errors.New("kill")
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, h := range hs {
				s.Kill(h.PID(), kill)
			}
		}()
		require.NoError(t, s.Shutdown(context.Background()))
		wg.Wait()
		st := s.Stats()
		require.Zero(t, st.Failed, "round %d: %+v", round, st)
		require.EqualValues(t, 50, st.Killed+st.Cancelled, "round %d: %+v", round, st)
	}
}

// TestCleanupCommandsEndWithTheProcess: the commands a process yields to
// clean up after Shutdown's cancel get a context of its own, which ends
// when the process is killed (or ends), not only at the deadline; and
// PIDFrom still finds the process in it.
func TestCleanupCommandsEndWithTheProcess(t *testing.T) {
	calls := make(holder, 4)
	reg := new(Registry)
	reg.Register("hold", calls.handle)
	s := New(Options{Workers: 2, Dispatcher: reg})
	h, err := s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			switch {
			case ev.Type == EventCancel && errors.Is(ev.Error, ErrShutdown):
				out.Yield(1, "hold") // its cleanup
				return nil
			case ev.Type == EventYieldComplete:
				return ev.Error
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "", nil)
	require.NoError(t, err)
	// another process that takes its time to stop keeps Shutdown going
	slow := make(chan struct{})
	_, err = s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventCancel {
				<-slow
				out.Status = StatusDone
				return nil
			}
		}
		out.Status = StatusReceive
		return nil
	}}, "", nil)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { s.Shutdown(context.Background()); close(done) }()
	c := calls.next(t)
	require.NoError(t, c.Ctx.Err(), "cleanup runs")
	require.Equal(t, h.PID(), PIDFrom(c.Ctx))
	killed := errors.New("killed during cleanup")
	require.NoError(t, s.Kill(h.PID(), killed))
	<-c.Ctx.Done()
	require.ErrorIs(t, context.Cause(c.Ctx), killed)
	c.Fail(context.Cause(c.Ctx))
	_, err = wait(t, h)
	require.ErrorIs(t, err, killed)
	close(slow)
	<-done
}

// TestMaxStepSparesAStarvedStep: MaxStep counts the CPU time a step was
// given, not wall time. With the program's CPU clock stopped (a step
// that gets no processor: the load is elsewhere), a step that runs well
// past MaxStep in wall time is not killed; it was, when the watchdog
// measured wall time. The test waits on events: the slow-step report
// (60 ms of wall time, twice MaxStep) and two more watchdog ticks (the
// clock's reads), after which a wall-time limit would have killed it.
func TestMaxStepSparesAStarvedStep(t *testing.T) {
	var reads atomic.Int64
	defer func(f func() (time.Duration, bool)) { processCPU = f }(processCPU)
	processCPU = func() (time.Duration, bool) { reads.Add(1); return time.Second, true }
	warned := make(chan struct{})
	var once sync.Once
	s := New(Options{Workers: 1, MaxStep: 30 * time.Millisecond, SlowStep: 60 * time.Millisecond,
		Warn: func(PID, string) { once.Do(func() { close(warned) }) }})
	defer s.Shutdown(context.Background())
	spin := newSpinner()
	h, err := s.Submit(spin, "main", nil)
	require.NoError(t, err)
	ended := make(chan error, 1)
	go func() { _, err := h.Wait(context.Background()); ended <- err }()
	select {
	case <-warned:
	case err := <-ended:
		t.Fatalf("the starved step ended before it was reported slow: %v", err)
	}
	for seen := reads.Load(); reads.Load() < seen+2; {
		time.Sleep(time.Millisecond) // polls an event: the ticks' reads
	}
	close(spin.stop)
	select {
	case err = <-ended:
	case <-time.After(10 * time.Second): // only bounds a hang
		t.Fatal("the process did not end")
	}
	require.NoError(t, err, "a starved step was killed by MaxStep")
	require.Zero(t, s.Stats().StepLimited)
}
