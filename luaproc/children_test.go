package luaproc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// TestChildSet: children are found by PID however they were added, a
// collected one is gone, and the holes collecting leaves are squeezed
// out without losing the others.
func TestChildSet(t *testing.T) {
	s := scheduler.New(scheduler.Options{Workers: 1})
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	var hs []scheduler.Handle
	for range 50 {
		h, err := s.Submit(inboxProcess{}, "main", nil)
		require.NoError(t, err)
		hs = append(hs, h)
	}
	var c childSet
	for i := len(hs) - 1; i >= 40; i-- { // a few out of order first
		c.add(hs[i])
	}
	for _, h := range hs[:40] {
		c.add(h)
	}
	for _, h := range hs {
		got, ok := c.get(h.PID())
		require.True(t, ok)
		require.Equal(t, h, got)
	}
	_, ok := c.get(hs[49].PID() + 1000)
	require.False(t, ok)
	for i, h := range hs {
		if i%3 != 0 {
			c.remove(h.PID())
			c.remove(h.PID()) // twice: nothing more
		}
	}
	require.Less(t, len(c.entries), len(hs), "squeezed")
	for i, h := range hs {
		got, ok := c.get(h.PID())
		require.Equal(t, i%3 == 0, ok, "child %d", i)
		if ok {
			require.Equal(t, h, got)
		}
	}
	for _, h := range hs {
		s.Kill(h.PID(), nil)
	}
}
