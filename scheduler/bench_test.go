package scheduler

import (
	"context"
	"sync"
	"testing"

	"github.com/luarun/luarun/payload"
)

// Each benchmark has a luarun side and a goroutine baseline doing the same
// work, as sub-benchmarks of one function so they run in the same process
// and can be compared as a ratio (benchstat, or BENCHMARKS.md).

// countdown yields cmd n times (no arguments, no allocation), then ends.
type countdown struct {
	cmd string
	n   int
}

func (c *countdown) Init(context.Context, string, payload.Payloads) error { return nil }
func (c *countdown) Close()                                               {}
func (c *countdown) Step(_ []Event, out *StepOutput) error {
	if c.n == 0 {
		out.Status = StatusDone
		return nil
	}
	c.n--
	out.Yields = append(out.Yields, Yield{Tag: uint64(c.n), Command: c.cmd})
	return nil
}

func benchSched(b *testing.B, workers int, handlers map[string]HandlerFunc) *Scheduler {
	reg := new(Registry)
	for k, h := range handlers {
		reg.Register(k, h)
	}
	s := New(Options{Workers: workers, Dispatcher: reg})
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// reportIdle adds how often workers slept and were woken, per op.
func reportIdle(b *testing.B, s *Scheduler) {
	st := s.Stats()
	b.ReportMetric(float64(st.Parks)/float64(b.N), "parks/op")
	b.ReportMetric(float64(st.Wakeups)/float64(b.N), "wakeups/op")
}

func runToEnd(b *testing.B, s *Scheduler, p Process) {
	h, err := s.Submit(p, "main", nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// 1. One process, a synchronous handler: the cost of one yield round trip
// (step → dispatch → complete → step). Baseline: a request/reply round
// trip between two goroutines over unbuffered channels.
func BenchmarkYieldRoundTrip(b *testing.B) {
	b.Run("luarun", func(b *testing.B) {
		s := benchSched(b, 1, map[string]HandlerFunc{"nop": func(c Call) error {
			c.Complete(nil)
			return nil
		}})
		runToEnd(b, s, &countdown{cmd: "nop", n: 1000}) // warm the free lists
		b.ReportAllocs()
		b.ResetTimer()
		runToEnd(b, s, &countdown{cmd: "nop", n: b.N})
	})
	b.Run("goroutines", func(b *testing.B) {
		req, rep := make(chan struct{}), make(chan struct{})
		go func() {
			for range req {
				rep <- struct{}{}
			}
		}()
		b.ReportAllocs()
		for range b.N {
			req <- struct{}{}
			<-rep
		}
		close(req)
	})
}

// 2. 10,000 processes × 10 yields each, completed by a pool of goroutines.
// Baseline: 10,000 goroutines each sending 10 requests to the same pool and
// blocking on its own channel for each reply. ns/op is per yield.
func BenchmarkAsyncFanOut(b *testing.B) {
	const procs, yields = 10000, 10
	poolSize := 8
	b.Run("luarun", func(b *testing.B) {
		calls := make(chan Call, 1024)
		var pool sync.WaitGroup
		for range poolSize {
			pool.Add(1)
			go func() {
				defer pool.Done()
				for c := range calls {
					c.Complete(nil)
				}
			}()
		}
		s := benchSched(b, 0, map[string]HandlerFunc{"io": func(c Call) error {
			calls <- c
			return nil
		}})
		hs := make([]Handle, procs)
		b.ReportAllocs()
		b.ResetTimer()
		for n := 0; n < b.N; n += procs * yields {
			for i := range hs {
				h, err := s.Submit(&countdown{cmd: "io", n: yields}, "main", nil)
				if err != nil {
					b.Fatal(err)
				}
				hs[i] = h
			}
			for _, h := range hs {
				<-h.Done()
			}
		}
		b.StopTimer()
		reportIdle(b, s)
		close(calls)
		pool.Wait()
	})
	b.Run("goroutines", func(b *testing.B) {
		reqs := make(chan chan struct{}, 1024)
		var pool sync.WaitGroup
		for range poolSize {
			pool.Add(1)
			go func() {
				defer pool.Done()
				for r := range reqs {
					r <- struct{}{}
				}
			}()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for n := 0; n < b.N; n += procs * yields {
			var wg sync.WaitGroup
			for range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reply := make(chan struct{})
					for range yields {
						reqs <- reply
						<-reply
					}
				}()
			}
			wg.Wait()
		}
		b.StopTimer()
		close(reqs)
		pool.Wait()
	})
}

// pinger sends to its peer and waits for the reply, rounds times, then
// sends nil; ponger echoes to the sender until it gets a nil.
type pinger struct {
	s      *Scheduler
	self   PID
	peer   PID
	rounds int
}

func (p *pinger) Init(ctx context.Context, _ string, _ payload.Payloads) error {
	p.self = PIDFrom(ctx)
	return nil
}
func (p *pinger) Close() {}
func (p *pinger) Step(evs []Event, out *StepOutput) error {
	if len(evs) > 0 {
		p.rounds--
	}
	if p.rounds == 0 {
		out.Status = StatusDone
		return out.Send(p.peer, nil)
	}
	out.Status = StatusReceive
	return out.Send(p.peer, true)
}

type ponger struct {
	s    *Scheduler
	self PID
}

func (p *ponger) Init(ctx context.Context, _ string, _ payload.Payloads) error {
	p.self = PIDFrom(ctx)
	return nil
}
func (p *ponger) Close() {}
func (p *ponger) Step(evs []Event, out *StepOutput) error {
	for _, ev := range evs {
		if ev.Data == nil {
			out.Status = StatusDone
			return nil
		}
		if err := out.Send(ev.From, true); err != nil {
			return err
		}
	}
	out.Status = StatusReceive
	return nil
}

// 3. Message ping-pong between two processes: ns/op is one round trip (two
// messages). Baseline: two goroutines over unbuffered channels.
func BenchmarkMessagePingPong(b *testing.B) {
	b.Run("luarun", func(b *testing.B) {
		s := benchSched(b, 0, nil)
		pong, err := s.Submit(&ponger{s: s}, "main", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		runToEnd(b, s, &pinger{s: s, peer: pong.PID(), rounds: b.N})
		b.StopTimer()
		<-pong.Done()
	})
	b.Run("goroutines", func(b *testing.B) {
		ping, pong := make(chan bool), make(chan bool)
		go func() {
			for range ping {
				pong <- true
			}
		}()
		b.ReportAllocs()
		for range b.N {
			ping <- true
			<-pong
		}
		close(ping)
	})
}

// 4. Submit one-step processes and wait for them to end, per process.
// "batch": 1,000 submitted, then all awaited (a runtime spawning many
// processes); baseline 1,000 go f() and a WaitGroup. "one-at-a-time": submit
// one, wait, repeat; baseline go f() and wg.Wait(), which the Go runtime runs
// on the caller's own P with no thread handoff at all, while a process
// submitted from outside the workers always crosses threads twice.
func BenchmarkSubmitToComplete(b *testing.B) {
	const batch = 1000
	b.Run("batch/luarun", func(b *testing.B) {
		s := benchSched(b, 0, nil)
		hs := make([]Handle, batch)
		b.ReportAllocs()
		for n := 0; n < b.N; n += batch {
			for i := range hs {
				h, err := s.Submit(&countdown{n: 0}, "main", nil)
				if err != nil {
					b.Fatal(err)
				}
				hs[i] = h
			}
			for _, h := range hs {
				<-h.Done()
			}
		}
	})
	b.Run("batch/goroutines", func(b *testing.B) {
		b.ReportAllocs()
		for n := 0; n < b.N; n += batch {
			var wg sync.WaitGroup
			for range batch {
				wg.Add(1)
				go func() { wg.Done() }()
			}
			wg.Wait()
		}
	})
	// The same batch spawned by a process from inside its step
	// (StepOutput.Spawn): the children start on the spawning worker's deque.
	b.Run("batch-from-process/luarun", func(b *testing.B) {
		s := benchSched(b, 0, nil)
		hs := make([]Handle, batch)
		b.ReportAllocs()
		for n := 0; n < b.N; n += batch {
			parent := &fnProc{step: func(_ []Event, out *StepOutput) error {
				for i := range hs {
					h, err := out.Spawn(&countdown{n: 0}, "main", nil)
					if err != nil {
						return err
					}
					hs[i] = h
				}
				out.Status = StatusDone
				return nil
			}}
			runToEnd(b, s, parent)
			for _, h := range hs {
				<-h.Done()
			}
		}
	})
	b.Run("one-at-a-time/luarun", func(b *testing.B) {
		s := benchSched(b, 0, nil)
		b.ReportAllocs()
		for range b.N {
			runToEnd(b, s, &countdown{n: 0})
		}
		reportIdle(b, s)
	})
	b.Run("one-at-a-time/goroutines", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { wg.Done() }()
			wg.Wait()
		}
	})
}
