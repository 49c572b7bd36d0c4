package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// hoarder keeps every message it gets in a mailbox of its own (reported
// as its Backlog) until a "take" command completes, which takes n of
// them; it ends when a message "stop" is at the head.
type hoarder struct {
	box   []any
	taken int
}

func (h *hoarder) Init(context.Context, string, payload.Payloads) error { return nil }
func (h *hoarder) Close()                                               {}
func (h *hoarder) Step(evs []Event, out *StepOutput) error {
	for _, ev := range evs {
		switch ev.Type {
		case EventMessage:
			h.box = append(h.box, ev.Data)
		case EventYieldComplete:
			n := min(int(ev.Data.(int64)), len(h.box))
			h.box = h.box[n:]
			h.taken += n
		case EventCancel:
			out.Status = StatusDone
			out.Backlog = len(h.box)
			return nil
		}
	}
	out.Backlog = len(h.box)
	out.Status = StatusReceive
	return nil
}

// TestMaxMailbox: sends beyond the limit fail with ErrMailboxFull, the
// messages a process holds unread count, and the ones it takes free room.
func TestMaxMailbox(t *testing.T) {
	takes := make(holder, 4)
	reg := new(Registry)
	reg.Register("take", takes.handle)
	s := New(Options{Workers: 2, Dispatcher: reg, MaxMailbox: 10})
	h := &hoarder{}
	hh, err := s.Submit(h, "main", nil)
	require.NoError(t, err)
	sent, full := 0, 0
	for i := range 15 {
		if err := s.Send(0, hh.PID(), i); errors.Is(err, ErrMailboxFull) {
			full++
		} else {
			require.NoError(t, err)
			sent++
		}
	}
	require.Equal(t, 10, sent)
	require.Equal(t, 5, full)
	require.EqualValues(t, 5, s.Stats().RefusedMessages)

	// A process that takes messages makes room for as many.
	require.NoError(t, s.Shutdown(context.Background()))
	st := s.Stats()
	require.EqualValues(t, 10, st.DroppedMessages, "the 10 held unread when it ended")
}

// TestMailboxCountsTakenMessages: messages wait in the queue of a process
// blocked on a command (and count); once a step takes some of them from
// its backlog, sends are accepted again, exactly as many.
func TestMailboxCountsTakenMessages(t *testing.T) {
	pokes := make(holder, 1)
	reg := new(Registry)
	reg.Register("poke", pokes.handle)
	s := New(Options{Workers: 1, MaxMailbox: 3, Dispatcher: reg})
	defer s.Shutdown(context.Background())
	var box []any
	first := true
	p := &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			switch ev.Type {
			case EventMessage:
				box = append(box, ev.Data)
			case EventYieldComplete:
				box = box[ev.Data.(int):]
			case EventCancel:
				out.Status = StatusDone
				return nil
			}
		}
		if first {
			first = false
			out.Yield(1, "poke") // wait for it; messages queue meanwhile
		} else {
			out.Status = StatusReceive
		}
		out.Backlog = len(box)
		return nil
	}}
	h, err := s.Submit(p, "main", nil)
	require.NoError(t, err)
	poke := pokes.next(t)
	for i := range 3 {
		require.NoError(t, s.Send(0, h.PID(), i))
	}
	require.ErrorIs(t, s.Send(0, h.PID(), 3), ErrMailboxFull)
	poke.Complete(2) // the step drains the 3, takes 2, holds 1
	accepted := 0
	for accepted < 2 { // a send may come before that step: retry
		if err := s.Send(0, h.PID(), "more"); err == nil {
			accepted++
		} else {
			require.ErrorIs(t, err, ErrMailboxFull)
			time.Sleep(time.Millisecond)
		}
	}
	require.ErrorIs(t, s.Send(0, h.PID(), "one too many"), ErrMailboxFull)
}

// TestMailboxWarning: without a limit, Warn hears once of a process whose
// queue has passed MailboxWarning and which has taken nothing for
// mailboxIdle (shortened here).
func TestMailboxWarning(t *testing.T) {
	defer func(idle time.Duration, every int64) { mailboxIdle, mailboxCheckEvery = idle, every }(mailboxIdle, mailboxCheckEvery)
	mailboxIdle, mailboxCheckEvery = 20*time.Millisecond, 1
	var warnings atomic.Int32
	var msg atomic.Value
	s := New(Options{Workers: 1, MailboxWarning: 5, Dispatcher: shutdownHandlers(), Warn: func(_ PID, m string) {
		warnings.Add(1)
		msg.Store(m)
	}})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		s.Shutdown(ctx) // abandons the stubborn process
	}()
	h, err := s.Submit(stubborn(), "main", nil) // never takes its messages
	require.NoError(t, err)
	send20 := func() {
		for i := range 20 {
			require.NoError(t, s.Send(0, h.PID(), i))
		}
	}
	// its first step may take the first messages (it then blocks for
	// good): a second batch opens the window if the first did not
	send20()
	time.Sleep(2 * mailboxIdle)
	send20()
	time.Sleep(2 * mailboxIdle)
	send20()
	require.EqualValues(t, 1, warnings.Load())
	require.Regexp(t, fmt.Sprintf(`^\d+ messages are waiting for process %d, which has taken none for`, h.PID()), msg.Load())
}

// untilCancelled waits on a command that never completes and ends when
// it is cancelled.
func untilCancelled() *fnProc {
	started := false
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		for _, ev := range evs {
			if ev.Type == EventCancel {
				return ev.Error
			}
		}
		if !started {
			started = true
			out.Yield(1, "never")
		}
		return nil
	}}
}

// TestMaxProcs: Submit beyond the limit fails, from many goroutines at
// once exactly at the limit, and a process that ends frees its place.
func TestMaxProcs(t *testing.T) {
	const limit = 50
	s := New(Options{Workers: 2, MaxProcs: limit, Dispatcher: shutdownHandlers()})
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	var mu sync.Mutex
	var hs []Handle
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				h, err := s.Submit(untilCancelled(), "main", nil)
				switch {
				case err == nil:
					ok.Add(1)
					mu.Lock()
					hs = append(hs, h)
					mu.Unlock()
				case errors.Is(err, ErrTooManyProcesses):
					refused.Add(1)
				default:
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, limit, ok.Load())
	require.EqualValues(t, 160-limit, refused.Load())
	require.EqualValues(t, 160-limit, s.Stats().RefusedProcesses)
	require.NoError(t, s.Kill(hs[0].PID(), nil))
	wait(t, hs[0])
	_, err := s.Submit(untilCancelled(), "main", nil)
	require.NoError(t, err, "a place was freed")
	_, err = s.Submit(untilCancelled(), "main", nil)
	require.ErrorIs(t, err, ErrTooManyProcesses)
	require.NoError(t, s.Shutdown(context.Background()))
	st := s.Stats()
	require.EqualValues(t, limit+1, st.Submitted)
	require.EqualValues(t, 1, st.Killed)
	require.EqualValues(t, limit, st.Cancelled)
}

// TestEveryProcessCountedOnce: processes that return, fail, are killed,
// are cancelled by Shutdown, are abandoned at its deadline, and Submits
// racing Shutdown: every accepted Submit is counted exactly once by how
// it ended, and no refused one is counted at all.
func TestEveryProcessCountedOnce(t *testing.T) {
	for round := range 5 {
		s := New(Options{Workers: 4, Dispatcher: shutdownHandlers()})
		var accepted, closed atomic.Int64
		var wg sync.WaitGroup
		stopSubmitting := make(chan struct{})
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(g), uint64(round)))
				for {
					select {
					case <-stopSubmitting:
						return
					default:
					}
					var p Process
					switch rng.IntN(4) {
					case 0: // returns
						p = &fnProc{step: func(_ []Event, out *StepOutput) error { out.Status = StatusDone; return nil }}
					case 1: // fails
						p = &fnProc{step: func([]Event, *StepOutput) error { return errors.New("own error") }}
					case 2: // cleans up when cancelled
						p = cleaner()
					default: // ignores its cancel: abandoned at the deadline
						p = stubborn()
					}
					h, err := s.Submit(p, "main", nil)
					switch {
					case err == nil:
						accepted.Add(1)
						if rng.IntN(8) == 0 {
							s.Kill(h.PID(), errors.New("killed by the test"))
						}
					case errors.Is(err, ErrClosed):
						closed.Add(1)
						return
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		go func() { time.Sleep(time.Millisecond); close(stopSubmitting) }()
		s.Shutdown(ctx)
		cancel()
		wg.Wait()
		st := s.Stats()
		ended := st.Completed + st.Failed + st.Killed + st.Cancelled + st.Abandoned
		require.EqualValues(t, accepted.Load(), st.Submitted, "round %d: %+v", round, st)
		require.Equal(t, st.Submitted, ended, "round %d: %+v", round, st)
		require.Zero(t, st.LiveProcesses)
	}
}

// TestMailboxWarningOfHandedMessages: messages handed straight to a
// process that waits for them (handoff.go) and kept unread count towards
// the MailboxWarning as queued ones do. A process whose receive never
// takes what comes (a selective receive that never matches) waits for
// messages between them, so a sender stepping on a worker hands every
// one over: were the hand-off to skip the count's look, Warn would
// never hear of it (mailboxIdle is shortened, as in TestMailboxWarning).
func TestMailboxWarningOfHandedMessages(t *testing.T) {
	defer func(idle time.Duration, every int64) { mailboxIdle, mailboxCheckEvery = idle, every }(mailboxIdle, mailboxCheckEvery)
	mailboxIdle, mailboxCheckEvery = 20*time.Millisecond, 1
	var warnings atomic.Int32
	s := New(Options{Workers: 1, MailboxWarning: 5, Warn: func(PID, string) { warnings.Add(1) }})
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	kept := make(chan int, 64)
	var box []any
	hoard, err := s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			switch ev.Type {
			case EventMessage:
				box = append(box, ev.Data)
				kept <- len(box)
			case EventCancel:
				out.Status = StatusDone
			}
		}
		out.Backlog = len(box)
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	relay, err := s.Submit(&fnProc{step: func(evs []Event, out *StepOutput) error {
		out.Status = StatusReceive
		for _, ev := range evs {
			switch ev.Type {
			case EventMessage:
				if err := out.Send(hoard.PID(), ev.Data); err != nil {
					return err
				}
			case EventCancel:
				out.Status = StatusDone
			}
		}
		return nil
	}}, "main", nil)
	require.NoError(t, err)
	sendVia := func(n int) {
		for i := range n {
			waitIdle(t, hoard) // so that the relay's send hands it over
			require.NoError(t, s.Send(0, relay.PID(), i))
			<-kept
		}
	}
	sendVia(20)
	time.Sleep(2 * mailboxIdle)
	sendVia(20)
	time.Sleep(2 * mailboxIdle)
	sendVia(20)
	require.Positive(t, s.Stats().HandOffs)
	require.EqualValues(t, 1, warnings.Load())
}
