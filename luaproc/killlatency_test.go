package luaproc

// Kill latency: from Runtime.Kill to the process's Wait returning, while
// the process is inside a long built-in (table.sort, json.decode) or a
// plain Lua loop. The contract is 10 ms; the test's own bound only
// catches a kill that is not seen at all (a loaded 2-core machine must
// not fail it), and the figures are logged. For the measurement that
// BENCHMARKS.md reports, run with -kill.runs 21 -kill.big:
//
//	go test ./luaproc -run TestKillLatency -v -kill.runs 21 -kill.big

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lua "github.com/luarun/luarun/lua"
)

var (
	killRuns = flag.Int("kill.runs", 3, "kills per case in TestKillLatency")
	killBig  = flag.Bool("kill.big", false, "TestKillLatency at BENCHMARKS.md's sizes (3M items to sort, 30 MB of JSON)")
)

// killLatencyLua: each entry builds its input, tells the test it is about
// to start (the inbox's PID is its argument), and runs until killed.
const killLatencyLua = `
local function ready(to) process.send(to, "ready") end
function sort(to, n)
  local t = {}
  for i = 1, n do t[i] = (i * 7919) % 1000003 end
  ready(to)
  while true do table.sort(t) table.sort(t, function(a, b) return a > b end) end
end
function decode(to, n)
  local s = "[" .. ('{"a":1,"b":"some text","c":[1,2,3]},'):rep(n) .. "1]"
  ready(to)
  while true do json.decode(s) end
end
function loop(to)
  ready(to)
  local x = 0
  while true do x = x + 1 end
end`

// TestKillLatency kills processes busy in each case a few times, at a
// point that moves from run to run, and logs the median and worst
// latency.
func TestKillLatency(t *testing.T) {
	sortN, jsonN := 300000, 80000 // 3 MB of JSON
	if *killBig {
		sortN, jsonN = 3000000, 800000 // 30 MB
	}
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	s, err := rt.LoadString("kill.lua", killLatencyLua)
	require.NoError(t, err)
	cases := []struct {
		entry string
		n     int
	}{{"sort", sortN}, {"decode", jsonN}, {"loop", 0}}
	for _, c := range cases {
		t.Run(c.entry, func(t *testing.T) {
			var took []time.Duration
			for run := 0; run < *killRuns; run++ {
				took = append(took, killOnce(t, rt, s, c.entry, c.n, run))
			}
			slices.Sort(took)
			t.Logf("%s: %d kills, median %v, worst %v (all: %v)", c.entry, len(took), took[len(took)/2], took[len(took)-1], took)
		})
	}
}

// killOnce starts entry, waits for its "ready", lets it run a little
// (more each run: the kill lands at different points of the work), and
// times the kill.
func killOnce(t *testing.T, rt *Runtime, s *Script, entry string, n, run int) time.Duration {
	t.Helper()
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	defer inbox.Close()
	h, err := rt.Start(context.Background(), s, entry, int64(inbox.PID()), int64(n))
	require.NoError(t, err)
	msg, err := inbox.Receive(testContext(t))
	require.NoError(t, err)
	require.Equal(t, "ready", msg.Value)
	time.Sleep(time.Duration(run%7) * 15 * time.Millisecond)
	start := time.Now()
	require.NoError(t, rt.Kill(h.PID(), fmt.Sprint("run ", run)))
	_, err = h.Wait(testContext(t)) // testContext's deadline: the kill was not seen
	took := time.Since(start)
	require.Error(t, err, "a killed process ends with an error")
	require.Contains(t, err.Error(), "killed")
	return took
}

// TestOffThreadWakesOnCancel: a state waiting for off-thread work (a
// big json.decode) stops when its context is cancelled, woken by the
// cancel itself, not by its next poll: with the poll an hour away, the
// wait still ends. (It used to end only at a poll, which a loaded
// machine delayed by tens of milliseconds.)
func TestOffThreadWakesOnCancel(t *testing.T) {
	defer func(p time.Duration) { offThreadPoll = p }(offThreadPoll)
	offThreadPoll = time.Hour
	L := lua.NewState()
	defer L.Close()
	ctx, cancel := context.WithCancel(context.Background())
	L.SetContext(ctx)
	release := make(chan struct{})
	defer close(release)
	waiting := make(chan struct{})
	wait := L.NewFunction(func(L *lua.LState) int {
		close(waiting)
		_, _ = offThread(L, func() (int, error) { <-release; return 0, nil })
		return 0
	})
	errc := make(chan error, 1)
	go func() { errc <- L.CallByParam(lua.P{Fn: wait, Protect: true}) }()
	<-waiting
	cancel()
	select {
	case err := <-errc:
		require.ErrorContains(t, err, context.Canceled.Error())
	case <-testContext(t).Done(): // only bounds a hang
		t.Fatal("the wait did not end on the cancel")
	}
}
