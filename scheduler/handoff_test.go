package scheduler

// Tests of the direct hand-off (handoff.go): order per sender, exact
// counts, a handed message dropped with its process, and the bound on
// how long a pair handing a message back and forth keeps a worker from
// its queues.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// handOffSender sends rounds bursts of 1 to 3 numbered messages to the
// collector (PID in *to, once set), each in one step, and waits for
// the collector's ack of each before the next burst: the first message
// of a burst finds the collector waiting (a hand-off), the others queue
// behind it.
func handOffSender(to *atomic.Uint64, rounds int) *fnProc {
	next, acked := 1, 0
	round := 0
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventMessage {
				acked++
			}
		}
		if acked < next-1 { // acks of the last burst still to come
			out.Status = StatusReceive
			return nil
		}
		if round == rounds {
			out.Status = StatusDone
			return nil
		}
		round++
		for range 1 + round%3 {
			if err := out.Send(PID(to.Load()), int64(next)); err != nil {
				return err
			}
			next++
		}
		out.Status = StatusReceive
		return nil
	}}
}

// handOffCollector acks every message to its sender and checks that
// each sender's numbers come in order, each once; it ends after total.
func handOffCollector(total int) *fnProc {
	last := map[PID]int64{}
	got := 0
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type != EventMessage {
				continue
			}
			n := ev.Data.(int64)
			if n != last[ev.From]+1 {
				return fmt.Errorf("from %d: got %d after %d", ev.From, n, last[ev.From])
			}
			last[ev.From] = n
			got++
			if err := out.Send(ev.From, "ack"); err != nil {
				return err
			}
		}
		out.Status = StatusReceive
		if got == total {
			out.Status = StatusDone
		}
		return nil
	}}
}

// TestHandOffOrderAndCounts: senders that keep finding the collector
// waiting hand it their messages; each sender's come in order, none is
// lost or doubled, and the counters say the hand-offs happened.
func TestHandOffOrderAndCounts(t *testing.T) {
	const senders, rounds = 8, 300
	total := 0
	for r := 1; r <= rounds; r++ {
		total += 1 + r%3
	}
	s := newSched(t, 0, nil) // GOMAXPROCS workers: -cpu 1,2,4,8
	var to atomic.Uint64
	hc, err := s.Submit(handOffCollector(senders*total), "main", nil)
	require.NoError(t, err)
	to.Store(uint64(hc.PID()))
	var hs []Handle
	for range senders {
		h, err := s.Submit(handOffSender(&to, rounds), "main", nil)
		require.NoError(t, err)
		hs = append(hs, h)
	}
	_, err = wait(t, hc)
	require.NoError(t, err)
	for _, h := range hs {
		_, err := wait(t, h)
		require.NoError(t, err)
	}
	st := s.Stats()
	require.NotZero(t, st.HandOffs, "%+v", st)
	require.Zero(t, st.DroppedMessages)
	require.EqualValues(t, senders+1, st.Completed)
}

// TestHandOffDroppedWhenAbandoned: a message handed to a process that
// is then abandoned at the shutdown deadline before it runs again is
// counted as dropped, as a queued one is.
func TestHandOffDroppedWhenAbandoned(t *testing.T) {
	s := New(Options{Workers: 1})
	rcv, err := s.Submit(receiver(2), "main", nil)
	require.NoError(t, err)
	for s.Stats().Steps == 0 { // the receiver waits for messages
		time.Sleep(time.Millisecond)
	}
	handed, release := make(chan struct{}), make(chan struct{})
	_, err = s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		if err := out.Send(rcv.PID(), "x"); err != nil { // into its hands
			return err
		}
		close(handed)
		<-release // until abandon has taken the receiver
		out.Status = StatusDone
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	<-handed
	// In the slot of the one worker, whose step runs on (its counts are
	// published when it idles).
	require.Equal(t, rcv.PID(), s.workers[0].handed.Load().pid)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed: abandon at once
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(ctx) }()
	<-rcv.Done()
	close(release)
	require.Error(t, <-shut) // the receiver was abandoned
	st := s.Stats()
	require.EqualValues(t, 1, st.DroppedMessages, "%+v", st)
	require.EqualValues(t, 1, st.Abandoned) // the receiver; the sender returned
}

// TestHandOffFairness: on one worker, two processes handing a message
// back and forth (each runs next, as the other's runnext) leave the
// worker's queues a turn at least every fairnessTick picks: a process
// that asks to run again (the global queue) steps between every
// fairnessTick hand-offs of the pair, however long the pair goes on.
//
// The watchdog is on (hand-offs go to runnext only with one) but its
// slice is long enough that it never acts: on a loaded machine the OS
// pauses a worker now and then, the watchdog then moves runnext and
// starts helpers, and a helper paused in the spinner's step lets the
// pair hop on with no bound a count could show.
func TestHandOffFairness(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour})
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	var hops, maxGap, lastHops, spins atomic.Int64
	var stop atomic.Bool
	spinner := &fnProc{step: func(_ []Event, out *StepOutput) error {
		h := hops.Load()
		if gap := h - lastHops.Load(); gap > maxGap.Load() && spins.Load() > 0 {
			maxGap.Store(gap)
		}
		lastHops.Store(h)
		spins.Add(1)
		if stop.Load() {
			out.Status = StatusDone
			return nil
		}
		out.Status = StatusContinue
		return nil
	}}
	bounce := func(peer *atomic.Uint64, serve bool) *fnProc {
		return &fnProc{step: func(evs []Event, out *StepOutput) error {
			out.Status = StatusReceive
			if stop.Load() { // wake the other to see it too (it may have ended)
				out.Status = StatusDone
				_ = out.Send(PID(peer.Load()), "ball")
				return nil
			}
			if serve && len(evs) == 0 { // the first step serves
				return out.Send(PID(peer.Load()), "ball")
			}
			for _, ev := range evs {
				if ev.Type == EventMessage {
					hops.Add(1)
					if err := out.Send(ev.From, "ball"); err != nil {
						return err
					}
				}
			}
			return nil
		}}
	}
	var peerA, peerB atomic.Uint64
	hb, err := s.Submit(bounce(&peerB, false), "main", nil)
	require.NoError(t, err)
	peerA.Store(uint64(hb.PID()))
	hs, err := s.Submit(spinner, "main", nil)
	require.NoError(t, err)
	ha, err := s.Submit(bounce(&peerA, true), "main", nil)
	require.NoError(t, err)
	peerB.Store(uint64(ha.PID()))
	// Until the spinner has had its turns, or the pair has gone on long
	// enough to show it starves the spinner (no clock: counts).
	for (spins.Load() < 200 || hops.Load() < 20_000) && hops.Load() < 2_000_000 {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	for _, h := range []Handle{hs, ha, hb} {
		_, err := wait(t, h)
		require.NoError(t, err)
	}
	require.NotZero(t, s.Stats().HandOffs)
	require.GreaterOrEqual(t, spins.Load(), int64(200), "the spinner's steps")
	require.LessOrEqual(t, maxGap.Load(), int64(fairnessTick), "hand-offs between two steps of the spinner")
	t.Logf("at most %d hand-offs between two steps of the spinner (%d hops, %d steps of it)", maxGap.Load(), hops.Load(), spins.Load())
}

// closeOnMessage waits for messages, and closes ch and ends at the
// first step that brings any.
func closeOnMessage(ch chan struct{}) *fnProc {
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		if len(evs) > 0 {
			close(ch)
			out.Status = StatusDone
		}
		return nil
	}}
}

// TestHandedSlotTakenFromALongStep: a step that hands a message to a
// waiting process and then runs on does not keep that process in its
// worker's handed slot: the watchdog takes it from there (Ready, to the
// global queue), and it runs — here on a helper, the only worker being
// stuck — while the step still runs. The step waits for it: without the
// watchdog's look at the slot this would never end.
func TestHandedSlotTakenFromALongStep(t *testing.T) {
	s := New(Options{Workers: 1})
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	ran := make(chan struct{})
	rcv, err := s.Submit(closeOnMessage(ran), "main", nil)
	require.NoError(t, err)
	waitIdle(t, rcv)
	snd, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		if err := out.Send(rcv.PID(), "x"); err != nil {
			return err
		}
		<-ran // runs on until the receiver has run
		out.Status = StatusDone
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, rcv)
	require.NoError(t, err)
	_, err = wait(t, snd)
	require.NoError(t, err)
	require.EqualValues(t, 1, s.Stats().HandOffs)
}

// TestHandedSlotLeavesRunnextATurn: on one worker, a pair handing a
// message back and forth through the handed slot, which findWork looks
// at before runnext, does not keep a process woken into runnext waiting
// for good: the pair's next hand-off moves it to the deque, which the
// fairness looks reach. (The process woken here is made Ready by a step
// whose slot is already full: its second hand-off.)
func TestHandedSlotLeavesRunnextATurn(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour}) // a watchdog that never acts
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	woken := make(chan struct{})
	third, err := s.Submit(closeOnMessage(woken), "main", nil)
	require.NoError(t, err)
	waitIdle(t, third)
	var stop atomic.Bool
	var thirdSent atomic.Bool
	bounce := func(peer *atomic.Uint64, serve bool) *fnProc {
		return &fnProc{step: func(evs []Event, out *StepOutput) error {
			out.Status = StatusReceive
			if stop.Load() {
				out.Status = StatusDone
				_ = out.Send(PID(peer.Load()), "ball")
				return nil
			}
			if (serve && len(evs) == 0) || len(evs) > 0 {
				if err := out.Send(PID(peer.Load()), "ball"); err != nil {
					return err
				}
			}
			if len(evs) > 0 && thirdSent.CompareAndSwap(false, true) {
				return out.Send(third.PID(), "wake") // the slot is full: runnext
			}
			return nil
		}}
	}
	var peerA, peerB atomic.Uint64
	hb, err := s.Submit(bounce(&peerB, false), "main", nil)
	require.NoError(t, err)
	peerA.Store(uint64(hb.PID()))
	ha, err := s.Submit(bounce(&peerA, true), "main", nil)
	require.NoError(t, err)
	peerB.Store(uint64(ha.PID()))
	<-woken
	stop.Store(true)
	for _, h := range []Handle{third, ha, hb} {
		_, err := wait(t, h)
		require.NoError(t, err)
	}
}

// TestHandedSlotAbandonedAtTheDeadline: a process held in a worker's
// handed slot (Running for that worker, which is busy in the sender's
// step) is not running: Shutdown's deadline ends it at once, as it ends
// a Ready one, without waiting for the watchdog to move it (its slice
// here is too long for that) or for the sender's step to return. The
// step returns only once the receiver has ended (its context's cancel
// aside: abandon cancels it too, and such a step may ignore it).
func TestHandedSlotAbandonedAtTheDeadline(t *testing.T) {
	s := New(Options{Workers: 1, Slice: time.Hour}) // a watchdog that never acts
	rcv, err := s.Submit(receiver(2), "main", nil)
	require.NoError(t, err)
	waitIdle(t, rcv)
	handed, unstick := make(chan struct{}), make(chan struct{})
	snd, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		if err := out.Send(rcv.PID(), "x"); err != nil { // into the slot
			return err
		}
		close(handed)
		select {
		case <-rcv.Done():
		case <-unstick: // the test failed: let Shutdown end
		}
		out.Status = StatusDone
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	<-handed
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed: abandon at once
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(ctx) }()
	select {
	case <-rcv.Done():
	case <-time.After(10 * time.Second):
		close(unstick)
		<-shut
		t.Fatal("the process in the handed slot was not abandoned at the deadline")
	}
	var se *ShutdownError
	require.ErrorAs(t, <-shut, &se)
	require.Equal(t, []PID{rcv.PID()}, se.Abandoned, "the sender returned")
	_, err = snd.Wait(context.Background())
	require.NoError(t, err)
	st := s.Stats()
	require.EqualValues(t, 1, st.HandOffs)
	require.EqualValues(t, 1, st.DroppedMessages, "%+v", st)
}

// TestHandedSlotKilled: Kill reaches a process held in the handed slot
// of a worker still in the sender's step (it finds it Running and leaves
// the cancel queued, flagged): the process runs once taken from the slot
// (here by the watchdog, then a helper), gets the handed message first,
// then the cancel, and ends with the kill's reason.
func TestHandedSlotKilled(t *testing.T) {
	s := New(Options{Workers: 1})
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	reason := errors.New("killed in the slot")
	var got []EventType
	rcv, err := s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			got = append(got, ev.Type)
			if ev.Type == EventCancel {
				return ev.Error
			}
		}
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	waitIdle(t, rcv)
	snd, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		if err := out.Send(rcv.PID(), "x"); err != nil { // into the slot
			return err
		}
		if err := s.Kill(rcv.PID(), reason); err != nil {
			return err
		}
		<-rcv.Done() // runs on until the receiver has ended
		out.Status = StatusDone
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	_, err = wait(t, rcv)
	require.ErrorIs(t, err, reason)
	require.Equal(t, []EventType{EventMessage, EventCancel}, got)
	_, err = wait(t, snd)
	require.NoError(t, err)
	st := s.Stats()
	require.EqualValues(t, 1, st.HandOffs)
	require.EqualValues(t, 1, st.Killed)
	require.Zero(t, st.DroppedMessages)
}

// TestStatsOfABusyWorker: a worker that keeps rerunning one process (a
// command answered in its handler wakes it during each step, and nothing
// else waits) never looks for work nor idles; its step count still
// reaches Stats while it runs (publishEvery).
func TestStatsOfABusyWorker(t *testing.T) {
	s := newSched(t, 1, map[string]HandlerFunc{"echo": echo})
	const at = 10 * publishEvery
	reached, release := make(chan struct{}), make(chan struct{})
	steps := 0
	h, err := s.Submit(&fnProc{step: func(_ []Event, out *StepOutput) error {
		steps++
		if steps == at {
			close(reached)
			<-release
			out.Status = StatusDone
			return nil
		}
		out.Yield(uint64(steps), "echo", int64(steps))
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	<-reached
	got := s.Stats().Steps
	close(release)
	require.GreaterOrEqual(t, got, uint64(at-publishEvery), "steps published while the worker reruns one process")
	_, err = wait(t, h)
	require.NoError(t, err)
}
