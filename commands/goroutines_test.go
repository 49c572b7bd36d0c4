package commands

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestGoroutinePoolRunsEachOnce: 8 goroutines submit 20,000 functions
// while parked goroutines time out (1 ms) and Close comes in the middle;
// every function runs exactly once, and no goroutine is left.
func TestGoroutinePoolRunsEachOnce(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const submitters, each = 8, 2500
	p := &goroutinePool{idleTime: time.Millisecond}
	runs := make([]atomic.Int32, submitters*each)
	var done sync.WaitGroup
	done.Add(len(runs))
	var submit sync.WaitGroup
	for s := range submitters {
		submit.Go(func() {
			for i := range each {
				k := s*each + i
				p.Go(func() { runs[k].Add(1); done.Done() })
				if i%500 == 0 {
					time.Sleep(2 * time.Millisecond) // let parked goroutines time out
				}
				if s == 0 && i == each/2 {
					p.Close()
				}
			}
		})
	}
	submit.Wait()
	done.Wait()
	for k := range runs {
		require.Equal(t, int32(1), runs[k].Load(), "function %d", k)
	}
}

// TestGoroutinePoolReuses: calls made one after another run on one
// parked goroutine; after the idle time it exits. (The idle time of the
// reuse part is an hour: with 50 ms, a test stalled that long on a loaded
// machine saw the goroutine exit between two calls, and waited in vain
// for one parked.)
func TestGoroutinePoolReuses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	parked := func(p *goroutinePool) []parkedGoroutine {
		p.mu.Lock()
		defer p.mu.Unlock()
		return append([]parkedGoroutine(nil), p.idle...)
	}
	p := &goroutinePool{idleTime: time.Hour}
	var first chan func()
	for range 100 {
		ran := make(chan struct{})
		p.Go(func() { close(ran) })
		<-ran
		require.Eventually(t, func() bool { return len(parked(p)) == 1 },
			20*time.Second, 100*time.Microsecond, "one goroutine parked")
		if first == nil {
			first = parked(p)[0].ch
		}
		require.Equal(t, first, parked(p)[0].ch, "the same goroutine each time")
	}
	p.Close()

	// with a short idle time, the parked goroutine exits: it has parked
	// (the sweeper is set) and is no longer there
	p = &goroutinePool{idleTime: time.Millisecond}
	ran := make(chan struct{})
	p.Go(func() { close(ran) })
	<-ran
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.sweeper != nil && len(p.idle) == 0
	}, 20*time.Second, time.Millisecond, "the idle goroutine exits")
}

// TestGoroutinePoolSweep: the sweeper closes the channels of goroutines
// parked for the idle time or longer, keeps the others, and re-arms for
// the oldest of them.
func TestGoroutinePoolSweep(t *testing.T) {
	p := &goroutinePool{idleTime: time.Hour}
	old, recent := make(chan func(), 1), make(chan func(), 1)
	now := time.Now()
	p.idle = []parkedGoroutine{{old, now.Add(-2 * time.Hour)}, {recent, now.Add(-30 * time.Minute)}}
	p.sweep()
	_, open := <-old
	require.False(t, open, "parked for 2h: closed")
	require.Len(t, p.idle, 1)
	require.Equal(t, recent, p.idle[0].ch, "parked for 30 min: kept")
	require.True(t, p.armed, "re-armed for the one left")
	select {
	case <-recent:
		t.Fatal("the recent goroutine's channel was used")
	default:
	}
	p.Close()
	_, open = <-recent
	require.False(t, open, "Close closes the rest")
}
