package scheduler

// A finished process must be garbage: nothing the scheduler keeps for
// reuse (the workers' free queue nodes, the node pool) may point into it.

import (
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"
)

// TestEndedProcessesAreCollected runs processes that each take events
// (one yield, completed synchronously or asynchronously), drops every
// reference to them, and checks that the collector frees them. Each
// process's queue starts with a dummy node embedded in the process; it
// used to be recycled into a worker's free nodes once popped, so the
// free list kept the process alive, and through that process's own last
// node the one before it: every process that ever took an event stayed
// in memory (1.3 KB each in a Lua process-per-request service).
func TestEndedProcessesAreCollected(t *testing.T) {
	s := newSched(t, 2, map[string]HandlerFunc{
		"echo": echo,
		"async": func(c Call) error {
			go c.Complete(c.Args[0])
			return nil
		},
	})
	const n = 2000
	ptrs := make([]weak.Pointer[fnProc], 0, n)
	for i := range n {
		cmd := "echo"
		if i%2 == 1 {
			cmd = "async"
		}
		p := yielder(cmd, 1)
		ptrs = append(ptrs, weak.Make(p))
		h, err := s.Submit(p, "main", nil)
		require.NoError(t, err)
		_, err = wait(t, h)
		require.NoError(t, err)
	}
	runtime.GC()
	runtime.GC() // sync.Pool's victim cache goes at the second
	alive := 0
	for _, w := range ptrs {
		if w.Value() != nil {
			alive++
		}
	}
	// The workers' last step may still hold the very last process or two
	// (their events slices); nothing more.
	require.LessOrEqual(t, alive, 4, "of %d ended processes, %d are still reachable", n, alive)
}
