package luaproc

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var stressProcs = flag.Int("stress.procs", 10000, "processes in TestStressRing")

// TestStressRing: 10,000 Lua processes in a ring, each sending 5
// messages to its neighbour (with sleeps in between) and checking the
// order and sum of the 5 it receives; the coordinator checks every
// worker's result and the total. Every message is accounted for exactly:
// each worker's sum is its predecessor's id times 5.
func TestStressRing(t *testing.T) {
	n, k := int64(*stressProcs), int64(5)
	if testing.Short() {
		n = 1000
	}
	src, err := os.ReadFile("testdata/stress.lua.txt")
	require.NoError(t, err)
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("stress.lua", string(src))
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main", n, k)
	require.NoError(t, err)
	// a hang guard only (a lost message would leave a worker waiting):
	// under -race on a loaded machine the run takes a minute or more
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, []any{k * n * (n + 1) / 2}, res)
	st := rt.Stats()
	require.Zero(t, st.MessagesDropped, "no message may be lost")
}
