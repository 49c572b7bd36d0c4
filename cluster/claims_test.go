package cluster

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// TestLateClaimLeavesTheHolder: the claim of a process that no longer
// holds a name in its scheduler — its registering goroutine overtaken by
// an unregister and another process's register — is refused, or, if it
// was written before the other's, is not recorded after it; either way
// the key and this node's record stay the present holder's, and its
// release does not free the name.
func TestLateClaimLeavesTheHolder(t *testing.T) {
	srv := startServer(t)
	a := join(t, srv, "a")
	var pids []scheduler.PID
	for range 2 {
		h, err := a.sched.Submit(&sink{last: "never", done: make(chan struct{})}, "main", nil)
		require.NoError(t, err)
		pids = append(pids, h.PID())
	}
	p1, p2 := pids[0], pids[1]
	ctx := t.Context()
	holderIs := func(want scheduler.PID) {
		t.Helper()
		a.node.reg.pending.Wait() // the releases under way
		e, err := a.node.reg.bucket().Get(ctx, nameKey("svc"))
		require.NoError(t, err, "the key is there")
		assert.Equal(t, strconv.FormatUint(uint64(want), 10), string(e.Value()))
		a.node.reg.mu.Lock()
		assert.Equal(t, want, a.node.reg.held["svc"].pid)
		a.node.reg.mu.Unlock()
	}

	// p1's claim comes after p2 took the name over
	require.NoError(t, a.sched.Register("svc", p2))
	require.NoError(t, a.node.Register(ctx, "svc", p2))
	assert.ErrorIs(t, a.node.Register(ctx, "svc", p1), scheduler.ErrNameTaken)
	holderIs(p2)

	// p1 claimed first, p2 took it over, then p1's record comes
	a.sched.Unregister("svc")
	a.node.ReleaseNames(p2, []string{"svc"})
	a.node.reg.pending.Wait()
	require.NoError(t, a.sched.Register("svc", p1))
	rev1, err := a.node.claimName(ctx, "svc", p1)
	require.NoError(t, err)
	a.sched.Unregister("svc")
	require.NoError(t, a.sched.Register("svc", p2))
	require.NoError(t, a.node.Register(ctx, "svc", p2))
	assert.ErrorIs(t, a.node.hold("svc", p1, rev1), scheduler.ErrNoProcess)
	holderIs(p2)
}
