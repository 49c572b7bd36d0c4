package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// collector records the events it gets (of the kinds in keep) on a
// channel, and ends on a message "stop", or on an exit signal with an
// error unless it traps exits (as an Erlang process does).
type collector struct {
	ch    chan Event
	traps bool
	fail  error // ends with this error on "fail"
}

func newCollector(traps bool) *collector { return &collector{ch: make(chan Event, 1000), traps: traps} }

func (c *collector) Init(context.Context, string, payload.Payloads) error { return nil }
func (c *collector) Close()                                               {}
func (c *collector) Step(evs []Event, out *StepOutput) error {
	for _, ev := range evs {
		switch ev.Type {
		case EventMessage:
			switch ev.Data {
			case "stop":
				out.Status = StatusDone
				return nil
			case "fail":
				return errors.New("failed on purpose")
			}
			c.ch <- ev
		case EventDown:
			c.ch <- ev
		case EventExit:
			if !c.traps && ev.Error != nil {
				return ev.Error // dies with the linked process
			}
			c.ch <- ev
		case EventCancel:
			return ev.Error
		}
	}
	out.Status = StatusReceive
	return nil
}

func next(t *testing.T, c *collector) Event {
	t.Helper()
	select {
	case ev := <-c.ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event came")
		return Event{}
	}
}

// TestMonitorDownOnceAfterMessages: a monitor gets one down with how the
// process ended, after the messages it sent before it ended; monitoring
// an ended process answers at once with ErrNoProcess; a demonitored one
// sends nothing.
func TestMonitorDownOnceAfterMessages(t *testing.T) {
	s := newSched(t, 2, nil)
	w := newCollector(false)
	hw, err := s.Submit(w, "", nil)
	require.NoError(t, err)

	var sent int
	sender := &fnProc{step: func(_ []Event, out *StepOutput) error {
		for i := range 100 {
			require.NoError(t, out.Send(hw.PID(), i))
		}
		sent = 100
		return errors.New("ended badly")
	}}
	hs, ref, err := s.SubmitWith(sender, "", nil, SubmitOptions{Monitor: hw.PID()})
	require.NoError(t, err)
	for i := range 100 {
		ev := next(t, w)
		require.Equal(t, EventMessage, ev.Type)
		require.Equal(t, i, ev.Data)
	}
	down := next(t, w)
	require.Equal(t, EventDown, down.Type)
	require.Equal(t, ref, down.Tag)
	require.Equal(t, hs.PID(), down.From)
	require.EqualError(t, down.Error, "ended badly")
	require.Equal(t, 100, sent)

	ref2 := s.Monitor(hw.PID(), hs.PID()) // it has ended
	down = next(t, w)
	require.Equal(t, ref2, down.Tag)
	require.ErrorIs(t, down.Error, ErrNoProcess)

	quiet := newCollector(false)
	hq, err := s.Submit(quiet, "", nil)
	require.NoError(t, err)
	ref3 := s.Monitor(hw.PID(), hq.PID())
	s.Demonitor(hq.PID(), ref3)
	require.NoError(t, s.Send(0, hq.PID(), "stop"))
	wait(t, hq)
	require.NoError(t, s.Send(0, hw.PID(), "after"))
	ev := next(t, w)
	require.Equal(t, "after", ev.Data, "no down came for the demonitored process")
	require.NoError(t, s.Send(0, hw.PID(), "stop"))
}

// TestLinkChainDies: in a chain of 10,000 linked processes, one failure
// ends them all; a process that traps exits stops it there.
func TestLinkChainDies(t *testing.T) {
	const n = 10000
	s := newSched(t, 4, nil)
	hs := make([]Handle, n)
	cs := make([]*collector, n)
	for i := range hs {
		cs[i] = newCollector(i == n/2) // the middle one traps
		h, err := s.Submit(cs[i], "", nil)
		require.NoError(t, err)
		hs[i] = h
		if i > 0 {
			require.NoError(t, s.Link(hs[i-1].PID(), h.PID()))
		}
	}
	require.NoError(t, s.Send(0, hs[0].PID(), "fail"))
	for i := 1; i < n/2; i++ {
		_, err := wait(t, hs[i])
		require.Error(t, err, "process %d of the chain", i)
	}
	ev := next(t, cs[n/2])
	require.Equal(t, EventExit, ev.Type)
	require.Equal(t, hs[n/2-1].PID(), ev.From)
	for i := n/2 + 1; i < n; i++ {
		_, ok := s.Lookup(hs[i].PID())
		require.True(t, ok, "process %d beyond the trapping one lives", i)
	}
	st := s.Stats()
	require.EqualValues(t, n/2, st.Failed)
	for i := n / 2; i < n; i++ {
		s.Send(0, hs[i].PID(), "stop")
	}
}

// TestLinkToEndedProcess: linking to an ended process sends the exit at
// once, with ErrNoProcess.
func TestLinkToEndedProcess(t *testing.T) {
	s := newSched(t, 2, nil)
	c := newCollector(true)
	h, err := s.Submit(c, "", nil)
	require.NoError(t, err)
	require.NoError(t, s.Link(h.PID(), 999999))
	ev := next(t, c)
	require.Equal(t, EventExit, ev.Type)
	require.ErrorIs(t, ev.Error, ErrNoProcess)
	require.ErrorIs(t, s.Link(999999, h.PID()), ErrNoProcess)
	require.NoError(t, s.Send(0, h.PID(), "stop"))
}

// TestDownsExactlyOnceUnderKills: many watchers monitor many processes
// that are killed while more monitors are made: every monitor gets
// exactly one down (made before the end: its reason; after: noproc).
func TestDownsExactlyOnceUnderKills(t *testing.T) {
	s := newSched(t, 4, nil)
	const watchers, targets = 4, 200
	ws := make([]*collector, watchers)
	whs := make([]Handle, watchers)
	for i := range ws {
		ws[i] = newCollector(false)
		h, err := s.Submit(ws[i], "", nil)
		require.NoError(t, err)
		whs[i] = h
	}
	ths := make([]Handle, targets)
	for i := range ths {
		h, err := s.Submit(newCollector(false), "", nil)
		require.NoError(t, err)
		ths[i] = h
	}
	var made [watchers]atomic.Int64
	var wg sync.WaitGroup
	for wi := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, th := range ths {
				s.Monitor(whs[wi].PID(), th.PID())
				made[wi].Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, th := range ths {
			s.Kill(th.PID(), errors.New("killed in the race"))
		}
	}()
	wg.Wait()
	for wi := range ws {
		seen := map[uint64]bool{}
		for range made[wi].Load() {
			ev := next(t, ws[wi])
			require.Equal(t, EventDown, ev.Type)
			require.False(t, seen[ev.Tag], "a second down for monitor %d", ev.Tag)
			seen[ev.Tag] = true
		}
		select {
		case ev := <-ws[wi].ch:
			t.Fatalf("an extra event: %+v", ev)
		case <-time.After(10 * time.Millisecond):
		}
		s.Send(0, whs[wi].PID(), "stop")
	}
}

// TestNamesReleasedOnEveryEnd: a name is held by one live process, found
// by Whereis, and released however the process ends.
func TestNamesReleasedOnEveryEnd(t *testing.T) {
	s := New(Options{Workers: 2, Dispatcher: shutdownHandlers()})
	ends := map[string]func(h Handle){
		"returns": func(h Handle) { s.Send(0, h.PID(), "stop") },
		"fails":   func(h Handle) { s.Send(0, h.PID(), "fail") },
		"killed":  func(h Handle) { s.Kill(h.PID(), nil) },
	}
	for how, end := range ends {
		h, err := s.Submit(newCollector(false), "", nil)
		require.NoError(t, err)
		require.NoError(t, s.Register(how, h.PID()))
		require.NoError(t, s.Register(how, h.PID()), "again by its holder: fine")
		other, err := s.Submit(newCollector(false), "", nil)
		require.NoError(t, err)
		require.ErrorIs(t, s.Register(how, other.PID()), ErrNameTaken)
		pid, ok := s.Whereis(how)
		require.True(t, ok)
		require.Equal(t, h.PID(), pid)
		end(h)
		wait(t, h)
		_, ok = s.Whereis(how)
		require.False(t, ok, "%s: the name is free", how)
		require.NoError(t, s.Register(how, other.PID()))
		require.ErrorIs(t, s.Register("late", h.PID()), ErrNoProcess)
	}
	require.True(t, s.Unregister("fails"))
	require.False(t, s.Unregister("fails"))
	// shutdown and abandon
	h, err := s.Submit(stubborn(), "", nil)
	require.NoError(t, err)
	require.NoError(t, s.Register("stubborn", h.PID()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s.Shutdown(ctx)
	for _, name := range []string{"returns", "killed", "stubborn"} {
		_, ok := s.Whereis(name)
		require.False(t, ok, name)
	}
}

// TestOnCrashOnlyUnwatched: OnCrash hears of a failure nobody watches,
// and of nothing else: not a monitored, linked or waited-on one
// (SubmitOptions.Waited), not a killed one, not a normal end.
func TestOnCrashOnlyUnwatched(t *testing.T) {
	var mu sync.Mutex
	crashed := map[PID]error{}
	s := New(Options{Workers: 2, OnCrash: func(pid PID, err error) {
		mu.Lock()
		crashed[pid] = err
		mu.Unlock()
	}})
	watcher := newCollector(true)
	hw, err := s.Submit(watcher, "", nil)
	require.NoError(t, err)
	start := func(opts SubmitOptions) Handle {
		h, _, err := s.SubmitWith(newCollector(false), "", nil, opts)
		require.NoError(t, err)
		return h
	}
	alone := start(SubmitOptions{})
	monitored := start(SubmitOptions{Monitor: hw.PID()})
	linked := start(SubmitOptions{Link: hw.PID()})
	waited := start(SubmitOptions{Waited: true})
	killed := start(SubmitOptions{})
	normal := start(SubmitOptions{})
	quiet := start(SubmitOptions{}) // a quiet monitor does not watch
	quietRef := s.MonitorQuietly(hw.PID(), quiet.PID())
	for _, h := range []Handle{alone, monitored, linked, waited, quiet} {
		require.NoError(t, s.Send(0, h.PID(), "fail"))
	}
	require.NoError(t, s.Kill(killed.PID(), errors.New("killed on purpose")))
	require.NoError(t, s.Send(0, normal.PID(), "stop"))
	// Wait for the ends through the stats: Done would make them watched.
	require.Eventually(t, func() bool {
		st := s.Stats()
		return st.Failed == 5 && st.Killed == 1 && st.Completed == 1
	}, 10*time.Second, time.Millisecond)
	// the watcher hears of both monitored processes' ends
	downs := map[uint64]PID{}
	for len(downs) < 2 {
		if ev := next(t, watcher); ev.Type == EventDown {
			downs[ev.Tag] = ev.From
		}
	}
	require.Equal(t, quiet.PID(), downs[quietRef])
	require.NoError(t, s.Send(0, hw.PID(), "stop"))
	// Shutdown returns once every end is through, OnCrash calls included.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, crashed, 2, "%v", crashed)
	require.EqualError(t, crashed[alone.PID()], "failed on purpose")
	require.EqualError(t, crashed[quiet.PID()], "failed on purpose")
}

// TestRelationsRacingEnds: processes that never had a monitor, link or
// name end on their own while Monitor and Register race their ends. Every
// monitor gets exactly one down (from the end, or noproc), and no name
// outlives its process: a process still in the table after it closed
// its relations must not get new, open ones that nobody closes.
func TestRelationsRacingEnds(t *testing.T) {
	s := newSched(t, 4, nil)
	const targets = 2000
	watcher := newCollector(false)
	wh, err := s.Submit(watcher, "", nil)
	require.NoError(t, err)
	ths := make([]Handle, targets)
	for i := range ths {
		h, err := s.Submit(newCollector(false), "", nil)
		require.NoError(t, err)
		ths[i] = h
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for _, th := range ths {
			s.Send(0, th.PID(), "stop")
		}
	}()
	go func() {
		defer wg.Done()
		for _, th := range ths {
			s.Monitor(wh.PID(), th.PID())
		}
	}()
	go func() {
		defer wg.Done()
		for i, th := range ths {
			s.Register(fmt.Sprintf("target-%d", i), th.PID())
		}
	}()
	wg.Wait()
	seen := map[uint64]bool{}
	for range targets {
		ev := next(t, watcher) // a lost down fails here
		require.Equal(t, EventDown, ev.Type)
		require.False(t, seen[ev.Tag], "a second down for monitor %d", ev.Tag)
		seen[ev.Tag] = true
	}
	for i, th := range ths {
		<-th.Done()
		_, held := s.Whereis(fmt.Sprintf("target-%d", i))
		require.False(t, held, "the name of ended process %d is still held", th.PID())
	}
	s.Send(0, wh.PID(), "stop")
}
