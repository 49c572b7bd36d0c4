package scheduler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/luarun/luarun/payload"
)

// A Submit whose Init runs while Shutdown reaches its deadline: the process
// is closed once, counted once, whichever side ends it. (Found in review:
// both used to close it.)
func TestSubmitRacingAbandonClosesOnce(t *testing.T) {
	for iter := 0; iter < 10; iter++ {
		s := New(Options{Workers: 2, Dispatcher: shutdownHandlers()})
		// keeps live > 0 and abandon looping: a long step
		long := &fnProc{step: func(_ []Event, out *StepOutput) error {
			time.Sleep(150 * time.Millisecond)
			out.Status = StatusContinue
			return nil
		}}
		if _, err := s.Submit(long, "main", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		const N = 2000
		release := make(chan struct{})
		var inInit sync.WaitGroup
		inInit.Add(N)
		procs := make([]*fnProc, N)
		var wg sync.WaitGroup
		var okCount atomic.Int64
		for i := range procs {
			procs[i] = &fnProc{
				init: func(string, payload.Payloads) error { inInit.Done(); <-release; return nil },
				step: func(_ []Event, out *StepOutput) error { out.Status = StatusDone; return nil },
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Submit(procs[i], "main", nil); err == nil {
					okCount.Add(1)
				}
			}()
		}
		inInit.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		done := make(chan error)
		go func() { done <- s.Shutdown(ctx) }()
		for !s.abandoning.Load() {
			time.Sleep(100 * time.Microsecond)
		}
		close(release)
		wg.Wait()
		err := <-done
		cancel()
		doubles := 0
		for _, p := range procs {
			if p.closed.Load() > 1 {
				doubles++
			}
		}
		var se *ShutdownError
		errors.As(err, &se)
		if doubles > 0 || s.live.Load() != 0 {
			t.Errorf("iter %d: %d processes closed twice; live=%d; long closed %d; abandoned %d; ok submits %d",
				iter, doubles, s.live.Load(), long.closed.Load(), len(se.Abandoned), okCount.Load())
			return
		}
	}
}

// A process Running at the deadline is ended by its worker when the step
// returns, and listed in ShutdownError.Abandoned like the parked ones.
func TestRunningAtDeadlineIsReported(t *testing.T) {
	s := New(Options{Workers: 1, Dispatcher: shutdownHandlers()})
	entered := make(chan struct{})
	p := &fnProc{step: func(_ []Event, out *StepOutput) error {
		select {
		case <-entered:
		default:
			close(entered)
			time.Sleep(100 * time.Millisecond)
		}
		out.Yield(1, "never")
		return nil
	}}
	h, _ := s.Submit(p, "main", nil)
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := s.Shutdown(ctx)
	_, perr := h.Result()
	var se *ShutdownError
	if !errors.As(err, &se) {
		t.Fatalf("shutdown: %v", err)
	}
	if !errors.Is(perr, ErrAbandoned) || len(se.Abandoned) != 1 || se.Abandoned[0] != h.PID() {
		t.Errorf("process %d: err %v, abandoned list %v", h.PID(), perr, se.Abandoned)
	}
	if p.closed.Load() != 1 {
		t.Errorf("closed %d times", p.closed.Load())
	}
}

// Shutdown with a done context and nothing live returns nil, not an empty
// ShutdownError.
func TestShutdownWithDoneContextAndNothingLive(t *testing.T) {
	bad := 0
	for range 50 {
		s := New(Options{Workers: 1})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Shutdown(ctx); err != nil {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d/50 shutdowns of an empty scheduler returned an error", bad)
	}
}
