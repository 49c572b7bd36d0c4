package scheduler

// Tests of the release of a nested step's caller (nested.go,
// releaseHost) at the edges of the nesting: a waker that comes between
// the caller's flagHosting and the publication of host and guest must
// still make the nested process step aside.

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunHandedReleasedByAWakerAtTheStart: a message for the caller sent
// at any moment around the start of its nested step releases it. The
// test sends it after a random short delay from the moment the caller
// is about to nest, many times over, so that some land between host()
// and the publication of w.nest.host. The guest spins until asked to
// step aside; if the caller has had its message for captiveAfter without
// the guest being asked, the caller is captive: the test fails.
func TestRunHandedReleasedByAWakerAtTheStart(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs a waker running beside the worker")
	}
	const rounds = 4000
	const captiveAfter = 10 * time.Second // the waker's releaseHost takes microseconds
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	var (
		guest     *nestableProc
		callerPID atomic.Uint64
		base      int32 // guest.preempts before the round's nesting (worker goroutine only)
		captive   atomic.Bool
		nesting   atomic.Bool // the caller is about to nest: the waker may go
		done      = make(chan struct{}, 1)
	)
	guest = nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			if ev.Type == EventCancel {
				out.Status = StatusDone
				return nil
			}
			if out.w.nesting {
				spinUntilReleased(s.table.get(PID(callerPID.Load())), guest, base, captiveAfter, &captive)
			}
			if err := out.Send(ev.From, ev.Data); err != nil {
				return err
			}
		}
		return nil
	})
	g, err := s.Submit(guest, "main", nil)
	require.NoError(t, err)
	waitIdle(t, g)
	goes, nested := 0, 0
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			if ev.Type == EventCancel {
				return ev.Error
			}
			switch ev.Data {
			case "go":
				goes++
			case "poke":
				done <- struct{}{}
			case "end":
				out.Status = StatusDone
				return nil
			}
		}
		if goes > nested {
			nested = goes
			base = guest.preempts.Load()
			nesting.Store(true)
			if err := out.Send(g.PID(), int64(goes)); err != nil {
				return err
			}
			out.RunHanded()
		}
		return nil
	}), "main", nil)
	require.NoError(t, err)
	callerPID.Store(uint64(h.PID()))
	sink := 0
	for i := 0; i < rounds && !captive.Load(); i++ {
		require.NoError(t, s.Send(0, h.PID(), "go"))
		for !nesting.Load() {
			runtime.Gosched()
		}
		nesting.Store(false)
		for d := rand.IntN(2000); d > 0; d-- {
			sink += d
		}
		require.NoError(t, s.Send(0, h.PID(), "poke"))
		<-done
	}
	_ = sink
	require.False(t, captive.Load(), "a message for the caller did not release its nested step")
	require.NoError(t, s.Send(0, h.PID(), "end"))
	_, err = wait(t, h)
	require.NoError(t, err)
}

// spinUntilReleased spins, as a nested step that cannot end by itself,
// until guest is asked to step aside (its count past base); if caller
// has had an event for captiveAfter meanwhile without that, it records
// captive and returns.
func spinUntilReleased(caller *proc, guest *nestableProc, base int32, captiveAfter time.Duration, captive *atomic.Bool) {
	var since time.Time
	for guest.preempts.Load() == base {
		if caller.state.Load()&(flagWoken|flagMessage) == 0 {
			continue
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > captiveAfter {
			captive.Store(true)
			return
		}
		runtime.Gosched()
	}
}

// TestRunHandedNotWithEventsLeftQueued: a caller whose step took only
// maxDrain of its events has more queued, pushed before its step began:
// no waker will come for them (their wakes found it Ready), so a nested
// step would hold them unseen for as long as it runs. It does not nest.
func TestRunHandedNotWithEventsLeftQueued(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	g, err := s.Submit(adder(false), "main", nil)
	require.NoError(t, err)
	waitIdle(t, g)
	var ranWithQueued atomic.Int32 // 0 unknown, 1 did not nest, 2 nested
	h, err := s.Submit(nestStep(func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		if len(evs) < maxDrain {
			return nil // its first step; the rest after the full one
		}
		require.NoError(t, out.Send(g.PID(), int64(1)))
		_, _, ran, _ := out.RunHanded()
		ranWithQueued.Store(1)
		if ran {
			ranWithQueued.Store(2)
		}
		out.Status = StatusDone
		return nil
	}), "main", nil)
	require.NoError(t, err)
	waitIdle(t, h)
	// The worker is held by gate's step while the messages queue, so
	// that the caller's step finds them all queued.
	started, release := make(chan struct{}), make(chan struct{})
	gate, err := s.Submit(nestStep(func(_ []Event, out *StepOutput) error {
		close(started)
		<-release
		out.Status = StatusDone
		return nil
	}), "main", nil)
	require.NoError(t, err)
	<-started
	for i := 0; i < maxDrain+5; i++ {
		require.NoError(t, s.Send(0, h.PID(), int64(i)))
	}
	close(release)
	_, err = wait(t, gate)
	require.NoError(t, err)
	_, err = wait(t, h)
	require.NoError(t, err)
	require.EqualValues(t, 1, ranWithQueued.Load(), "1: did not nest, 2: nested with events queued")
}
