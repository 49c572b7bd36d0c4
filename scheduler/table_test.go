package scheduler

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTablePagesComeAndGo(t *testing.T) {
	var tb table
	const n = 5*pageSize + 17
	procs := make([]*proc, n+1)
	var wg sync.WaitGroup
	for g := range 4 { // concurrent puts across page boundaries
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pid := 1 + g; pid <= n; pid += 4 {
				if pid%7 == 0 {
					continue // Init "failed": released without a put, below
				}
				procs[pid] = &proc{pid: PID(pid)}
				tb.put(procs[pid])
			}
		}()
	}
	wg.Wait()
	for pid := 1; pid <= n; pid++ {
		require.Same(t, procs[pid], tb.get(PID(pid)), "pid %d", pid)
	}
	require.Nil(t, tb.get(n+1))
	require.Nil(t, tb.get(1<<40), "far beyond the directory")
	require.Len(t, tb.all(), n-n/7)

	for pid := 1; pid <= n; pid++ {
		if pid%7 == 0 {
			tb.release(PID(pid))
		} else {
			tb.remove(PID(pid))
		}
		require.Nil(t, tb.get(PID(pid)))
	}
	require.Empty(t, tb.all())
	for i := range 5 {
		require.Nil(t, tb.page(i), "page %d: every PID released, so it is freed", i)
	}
	require.NotNil(t, tb.page(5), "page 5 still has unissued PIDs")
}
