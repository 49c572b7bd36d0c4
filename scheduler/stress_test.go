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

	"github.com/luarun/luarun/payload"
	"github.com/stretchr/testify/require"
)

// stressProc runs a random plan: some steps, each yielding 1-3 commands of
// random kinds, sending a message to a random process each step, and
// sometimes waiting in StatusReceive instead of StatusYield. Every
// completion carries the process's index and the yield's tag back, so a
// completion delivered to the wrong process or the wrong yield is caught.
type stressProc struct {
	idx         int64
	plan        []int // yields per step
	step        int
	nextTag     uint64
	outstanding map[uint64]bool
	sum         int64 // of the tags of completed yields
	received    int64
	rng         *rand.Rand
	env         *stressEnv
	closed      atomic.Int32
}

type stressEnv struct {
	s        *Scheduler
	pids     []atomic.Uint64 // idx → PID, once submitted
	sentOK   atomic.Int64
	received atomic.Int64
	failures chan error
}

var stressCommands = []string{"sync", "async", "late", "shuffled"}

func (p *stressProc) fail(format string, args ...any) error {
	err := fmt.Errorf("process %d: "+format, append([]any{p.idx}, args...)...)
	select {
	case p.env.failures <- err:
	default:
	}
	return err
}

func (p *stressProc) Step(evs []Event, out *StepOutput) error {
	var cancelled error
	for _, ev := range evs {
		switch ev.Type {
		case EventYieldComplete:
			if ev.Error != nil {
				return p.fail("yield %d failed: %v", ev.Tag, ev.Error)
			}
			got := ev.Data.([2]int64)
			if got[0] != p.idx || uint64(got[1]) != ev.Tag || !p.outstanding[ev.Tag] {
				return p.fail("completion %v for tag %d was not mine (outstanding %v)", got, ev.Tag, p.outstanding)
			}
			delete(p.outstanding, ev.Tag)
			p.sum += int64(ev.Tag)
		case EventMessage:
			p.received++
			p.env.received.Add(1)
		case EventCancel:
			cancelled = ev.Error
		}
	}
	if cancelled != nil {
		return fmt.Errorf("killed: %w", cancelled)
	}
	if len(p.outstanding) > 0 {
		out.Status = StatusYield
		if p.rng.IntN(2) == 0 {
			out.Status = StatusReceive // a message may wake us first
		}
		return nil
	}
	if p.step == len(p.plan) {
		out.Status = StatusDone
		out.Result = payload.Payloads{p.sum}
		return nil
	}
	peer := p.env.pids[p.rng.IntN(len(p.env.pids))].Load()
	if peer != 0 {
		var err error
		if p.rng.IntN(2) == 0 {
			err = p.env.s.Send(0, PID(peer), int64(1)) // via the global queue
		} else {
			err = out.Send(PID(peer), int64(1)) // via this worker's deque
		}
		if err == nil {
			p.env.sentOK.Add(1)
		}
	}
	for range p.plan[p.step] {
		p.nextTag++
		p.outstanding[p.nextTag] = true
		cmd := stressCommands[p.rng.IntN(len(stressCommands))]
		out.Yield(p.nextTag, cmd, p.idx, int64(p.nextTag))
	}
	p.step++
	out.Status = StatusYield
	return nil
}

func (p *stressProc) Init(context.Context, string, payload.Payloads) error { return nil }

func (p *stressProc) Close() { p.closed.Add(1) }

// expected is what the process returns if it runs to the end.
func (p *stressProc) expected() int64 {
	n := int64(0)
	for _, k := range p.plan {
		n += int64(k)
	}
	return n * (n + 1) / 2
}

// shuffler completes calls from a few goroutines, in random order.
type shuffler struct {
	in   chan Call
	wg   sync.WaitGroup
	done chan struct{}
}

func newShuffler(goroutines int) *shuffler {
	sh := &shuffler{in: make(chan Call, 1024), done: make(chan struct{})}
	for g := range goroutines {
		sh.wg.Add(1)
		go func() {
			defer sh.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			var batch []Call
			flush := func() {
				rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
				for _, c := range batch {
					c.Complete(answer(c))
				}
				batch = batch[:0]
			}
			for {
				select {
				case c := <-sh.in:
					batch = append(batch, c)
					if len(batch) >= 8 {
						flush()
					}
				case <-time.After(100 * time.Microsecond):
					flush()
				case <-sh.done:
					flush()
					return
				}
			}
		}()
	}
	return sh
}

func (sh *shuffler) stop() { close(sh.done); sh.wg.Wait() }

func answer(c Call) [2]int64 { return [2]int64{c.Args[0].(int64), c.Args[1].(int64)} }

func TestStress(t *testing.T) {
	procs := 3000
	if raceEnabled {
		procs = 600
	}
	sh := newShuffler(4)
	defer sh.stop()
	var late sync.WaitGroup
	defer late.Wait()
	handlers := map[string]HandlerFunc{
		"sync": func(c Call) error {
			c.Complete(answer(c))
			return nil
		},
		"async": func(c Call) error {
			go c.Complete(answer(c))
			return nil
		},
		"late": func(c Call) error {
			late.Add(1)
			time.AfterFunc(time.Duration(rand.IntN(500))*time.Microsecond, func() {
				defer late.Done()
				c.Complete(answer(c))
			})
			return nil
		},
		"shuffled": func(c Call) error {
			sh.in <- c
			return nil
		},
	}
	s := newSched(t, 0, handlers)
	env := &stressEnv{s: s, pids: make([]atomic.Uint64, procs), failures: make(chan error, 1)}
	ps := make([]*stressProc, procs)
	hs := make([]Handle, procs)
	for i := range ps {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		plan := make([]int, 1+rng.IntN(6))
		for j := range plan {
			plan[j] = 1 + rng.IntN(3)
		}
		ps[i] = &stressProc{idx: int64(i), plan: plan, outstanding: map[uint64]bool{}, rng: rng, env: env}
		h, err := s.Submit(ps[i], "main", nil)
		require.NoError(t, err)
		hs[i] = h
		env.pids[i].Store(uint64(h.PID()))
	}
	// Kill about one in ten, at random moments.
	killed := make([]atomic.Bool, procs)
	var killers sync.WaitGroup
	for i := range procs {
		if i%10 != 3 {
			continue
		}
		killers.Add(1)
		go func() {
			defer killers.Done()
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			if s.Kill(hs[i].PID(), errors.New("chosen")) == nil {
				killed[i].Store(true)
			}
		}()
	}
	killers.Wait()

	for i, h := range hs {
		defer func() {
			if n := ps[i].closed.Load(); n != 1 {
				t.Errorf("process %d closed %d times", i, n)
			}
		}()
		select {
		case <-h.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("process %d did not end:\n%s", i, dump(s, h))
		}
		res, err := h.Result()
		if killed[i].Load() && err != nil {
			require.EqualError(t, err, "killed: chosen", "process %d", i)
			continue
		}
		require.NoError(t, err, "process %d", i)
		require.Equal(t, payload.Payloads{ps[i].expected()}, res, "process %d", i)
	}
	select {
	case err := <-env.failures:
		t.Fatal(err)
	default:
	}
	st := s.Stats()
	require.EqualValues(t, env.sentOK.Load(), env.received.Load()+int64(st.DroppedMessages),
		"every message sent was received or counted as dropped")
	require.Zero(t, st.LiveProcesses)
	t.Logf("%d processes: %+v", procs, st)
}
