package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/luarun/luarun/payload"
	"github.com/stretchr/testify/require"
)

// cleaner waits on a command that never completes; when cancelled it
// yields an asynchronous "cleanup" command and ends with "cleaned" once that
// completes.
func cleaner() *fnProc {
	phase := 0
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			switch {
			case ev.Type == EventCancel && phase < 2:
				// The cancel may come before the first step (a slow start
				// under -race with one P): clean up all the same.
				phase = 2
				out.Yield(2, "cleanup")
				return nil
			case ev.Type == EventYieldComplete && ev.Tag == 2:
				if ev.Error != nil {
					return ev.Error
				}
				out.Status = StatusDone
				out.Result = payload.Payloads{"cleaned"}
				return nil
			}
		}
		if phase == 0 {
			phase = 1
			out.Yield(1, "never")
		}
		return nil
	}}
}

// stubborn ignores its cancel and keeps waiting.
func stubborn() *fnProc {
	started := false
	return &fnProc{step: func(_ []Event, out *StepOutput) error {
		if !started {
			started = true
			out.Yield(1, "never")
		}
		return nil
	}}
}

func shutdownHandlers() *Registry {
	reg := new(Registry)
	reg.Register("never", func(Call) error { return nil })
	// cleanup behaves like a real handler: it gives up if its process's
	// context is cancelled. Shutdown must leave that context live.
	reg.Register("cleanup", func(c Call) error {
		t := time.AfterFunc(10*time.Millisecond, func() { c.Complete(nil) })
		context.AfterFunc(c.Ctx, func() {
			if t.Stop() {
				c.Fail(context.Cause(c.Ctx))
			}
		})
		return nil
	})
	return reg
}

func TestShutdownServesCleanup(t *testing.T) {
	s := New(Options{Workers: 2, Dispatcher: shutdownHandlers()})
	var hs []Handle
	for range 20 {
		h, err := s.Submit(cleaner(), "main", nil)
		require.NoError(t, err)
		hs = append(hs, h)
	}
	time.Sleep(5 * time.Millisecond) // let them reach their first yield (or not: see cleaner)
	// Shutdown returns once the cleanups are done, not at the deadline: a
	// minute, which the 20 s bound catches, while a loaded machine may
	// well take more than the second this test once allowed
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	require.NoError(t, s.Shutdown(ctx))
	require.Less(t, time.Since(start), 20*time.Second)
	for _, h := range hs {
		res, err := h.Result()
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{"cleaned"}, res)
	}
	_, err := s.Submit(cleaner(), "main", nil)
	require.ErrorIs(t, err, ErrClosed)
}

func TestShutdownAbandonsAtDeadline(t *testing.T) {
	s := New(Options{Workers: 2, Dispatcher: shutdownHandlers()})
	good, err := s.Submit(cleaner(), "main", nil)
	require.NoError(t, err)
	bad := make([]*fnProc, 3)
	var badPIDs []PID
	for i := range bad {
		bad[i] = stubborn()
		h, err := s.Submit(bad[i], "main", nil)
		require.NoError(t, err)
		badPIDs = append(badPIDs, h.PID())
	}
	// The deadline comes once good has cleaned up: a 100 ms one could pass
	// first on a loaded machine, and good would be abandoned too.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		good.Wait(ctx)
		cancel()
	}()
	err = s.Shutdown(ctx)
	var se *ShutdownError
	require.ErrorAs(t, err, &se)
	require.Equal(t, badPIDs, se.Abandoned)
	for _, p := range bad {
		require.EqualValues(t, 1, p.closed.Load(), "abandoned processes are closed once")
	}
	for _, pid := range badPIDs {
		h, ok := s.Lookup(pid)
		require.False(t, ok, "abandoned process %d still listed (%v)", pid, h)
	}
	res, err := good.Result()
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"cleaned"}, res)
	require.Zero(t, s.Stats().LiveProcesses)
}

func TestShutdownIdleScheduler(t *testing.T) {
	s := New(Options{Workers: 4})
	require.NoError(t, s.Shutdown(context.Background()))
	require.True(t, errors.Is(s.Send(0, 1, nil), ErrNoProcess))
}
