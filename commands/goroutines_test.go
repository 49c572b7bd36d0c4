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
// parked goroutine; after the idle time it exits.
func TestGoroutinePoolReuses(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p := &goroutinePool{idleTime: 50 * time.Millisecond}
	for range 100 {
		ran := make(chan struct{})
		p.Go(func() { close(ran) })
		<-ran
		require.Eventually(t, func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.idle) == 1
		}, time.Second, 100*time.Microsecond, "one goroutine parked: the same one each time")
	}
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.idle) == 0
	}, 2*time.Second, time.Millisecond, "the idle goroutine exits")
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
