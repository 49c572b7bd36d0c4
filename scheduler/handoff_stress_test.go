package scheduler

// Stress of the hand-off (handoff.go) on several workers, with the
// watchdog ticking fast (it races the owner for the handed slot):
// clients send a request to their server, each finding it waiting (a
// hand-off), and take the answer with their next step; servers answer,
// and now and then send a note to another server. Kills of clients, and
// Shutdown with deadlines short enough to abandon, land at random points.
// Checked: every message sent is received or counted dropped, each
// server sees each client's requests in order, each client gets its
// answers in order and from its server, and no process is left alive.
// (Written by a review of nested steps, since reverted, and kept for the
// slot they shared.)

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
)

// nsMsg is a request (n, increasing per client), an answer to one
// (resp, the request's n), or a note between servers (resp, n 0).
type nsMsg struct {
	resp bool
	n    int64
}

type nsEnv struct {
	sentOK, received atomic.Int64
	failures         chan error
	servers          []atomic.Uint64
}

func (e *nsEnv) fail(err error) error {
	select {
	case e.failures <- err:
	default:
	}
	return err
}

// nsServer answers requests and ends at a cancel (counting the messages
// of its last step first).
func nsServer(env *nsEnv, seed uint64) *fnProc {
	last := map[PID]int64{}
	rng := rand.New(rand.NewPCG(seed, 3))
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		done := false
		for _, ev := range evs {
			switch ev.Type {
			case EventCancel:
				done = true
			case EventMessage:
				env.received.Add(1)
				m := ev.Data.(nsMsg)
				if m.resp {
					continue
				}
				if m.n <= last[ev.From] {
					return env.fail(fmt.Errorf("server %d: request %d from %d after %d", out.self, m.n, ev.From, last[ev.From]))
				}
				last[ev.From] = m.n
				if out.Send(ev.From, nsMsg{resp: true, n: m.n}) == nil {
					env.sentOK.Add(1)
				}
				if rng.IntN(4) == 0 {
					peer := PID(env.servers[rng.IntN(len(env.servers))].Load())
					if peer != 0 && peer != out.self && out.Send(peer, nsMsg{resp: true}) == nil {
						env.sentOK.Add(1)
					}
				}
			}
		}
		if done {
			out.Status = StatusDone
			return nil
		}
		out.Status = StatusReceive
		return nil
	}}
}

// nsClient sends srv requests 1..rounds one at a time and ends once
// answered, or when srv is gone; a cancel ends it with an error.
func nsClient(env *nsEnv, srv PID, rounds int64) *fnProc {
	var next, got int64
	take := func(self, from PID, m nsMsg) error {
		env.received.Add(1)
		if from != srv || !m.resp || m.n != got+1 {
			return env.fail(fmt.Errorf("client %d: got %+v from %d after %d", self, m, from, got))
		}
		got = m.n
		return nil
	}
	return &fnProc{step: func(evs []Event, out *StepOutput) error {
		var cancelled error
		for _, ev := range evs {
			switch ev.Type {
			case EventCancel:
				cancelled = ev.Error
			case EventMessage:
				if err := take(out.self, ev.From, ev.Data.(nsMsg)); err != nil {
					return err
				}
			}
		}
		if cancelled != nil {
			return fmt.Errorf("killed: %w", cancelled)
		}
		for got < rounds {
			if next > got { // the answer comes with a later step
				out.Status = StatusReceive
				return nil
			}
			next++
			if err := out.Send(srv, nsMsg{n: next}); err != nil {
				break
			}
			env.sentOK.Add(1)
		}
		out.Status = StatusDone
		return nil
	}}
}

// nsStart starts servers and clients (rounds requests each) on a new
// scheduler.
func nsStart(t *testing.T, servers, clients int, rounds int64) (*Scheduler, *nsEnv, []Handle) {
	t.Helper()
	s := New(Options{Workers: 4, Slice: 2 * time.Millisecond, MaxStep: time.Minute})
	env := &nsEnv{failures: make(chan error, 1), servers: make([]atomic.Uint64, servers)}
	for i := range servers {
		h, err := s.Submit(nsServer(env, uint64(i)), "main", nil)
		require.NoError(t, err)
		env.servers[i].Store(uint64(h.PID()))
	}
	clis := make([]Handle, clients)
	for i := range clis {
		h, err := s.Submit(nsClient(env, PID(env.servers[i%servers].Load()), rounds), "main", nil)
		require.NoError(t, err)
		clis[i] = h
	}
	return s, env, clis
}

// nsCheck checks the counts once s has shut down.
func nsCheck(t *testing.T, s *Scheduler, env *nsEnv) {
	t.Helper()
	select {
	case err := <-env.failures:
		t.Fatal(err)
	default:
	}
	st := s.Stats()
	require.EqualValues(t, env.sentOK.Load(), env.received.Load()+int64(st.DroppedMessages),
		"every message sent was received or counted as dropped: %+v", st)
	require.Zero(t, st.LiveProcesses)
}

// TestHandOffStressWithKills: clients run to their end or are killed.
func TestHandOffStressWithKills(t *testing.T) {
	for range 3 {
		s, env, clis := nsStart(t, 20, 200, 300)
		var wg sync.WaitGroup
		for range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
				_ = s.Kill(clis[rand.IntN(len(clis))].PID(), errors.New("chosen"))
			}()
		}
		wg.Wait()
		for i, h := range clis {
			select {
			case <-h.Done():
			case <-time.After(time.Minute):
				t.Fatalf("client %d did not end:\n%s", i, dump(s, h))
			}
			if _, err := h.Result(); err != nil {
				require.EqualError(t, err, "killed: chosen", "client %d", i)
			}
		}
		require.NoError(t, s.Shutdown(context.Background()))
		nsCheck(t, s, env)
	}
}

// TestHandOffStressShutdown: Shutdown lands in the middle of the traffic,
// with deadlines from none to a few milliseconds (abandoning some).
func TestHandOffStressShutdown(t *testing.T) {
	for i := range 5 {
		s, env, clis := nsStart(t, 10, 100, 1<<40)
		time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i)*time.Millisecond)
		_ = s.Shutdown(ctx) // an abandon is expected: the point is the counts
		cancel()
		for i, h := range clis {
			// nil: its server ended first
			if _, err := h.Result(); err != nil && !errors.Is(err, ErrShutdown) && !errors.Is(err, ErrAbandoned) {
				t.Fatalf("client %d: %v", i, err)
			}
		}
		nsCheck(t, s, env)
	}
}
