package luaproc

// Kill latency: from Runtime.Kill to the process's Wait returning, while
// the process is inside a long built-in (table.sort, json.decode,
// json.encode) or a plain Lua loop. The contract is 10 ms; the test's own bound only
// catches a kill that is not seen at all (a loaded 2-core machine must
// not fail it), and the figures are logged. For the measurement that
// BENCHMARKS.md reports, run with -kill.runs 21 -kill.big:
//
//	go test ./luaproc -run TestKillLatency -v -kill.runs 21 -kill.big

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
function encode(to, n)
  local t = {}
  for i = 1, n do t[i] = {a = i, b = "some text", c = {1, 2, 3}} end
  ready(to)
  while true do json.encode(t) end
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
	}{{"sort", sortN}, {"decode", jsonN}, {"encode", jsonN}, {"loop", 0}}
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

// bigJSONLua: 30 MB of JSON to decode and to encode, a string with
// escapes, so that nearly all the time is the JSON code's (payload's).
const bigJSONLua = `
function decode(to, n)
  local s = '"' .. ('\\n x\\u00e9'):rep(n) .. '"'
  process.send(to, "ready")
  while true do json.decode(s) end
end
function encode(to, n)
  local s = ("é<\n"):rep(n)
  process.send(to, "ready")
  while true do json.encode(s) end
end`

// TestKillStopsBigJSON: a kill of a process inside json.decode or
// json.encode of 30 MB stops the work itself: when Wait returns, no
// goroutine is still decoding or encoding. (Big texts used to be decoded
// on a goroutine of their own, which a kill abandoned: it ran on to its
// end, keeping a core busy.)
func TestKillStopsBigJSON(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	s, err := rt.LoadString("bigjson.lua", bigJSONLua)
	require.NoError(t, err)
	for _, c := range []struct {
		entry string
		n     int
	}{{"decode", 3 << 20}, {"encode", 3 << 20}} {
		t.Run(c.entry, func(t *testing.T) {
			took := killOnce(t, rt, s, c.entry, c.n, 1)
			t.Logf("%s of 30 MB: killed in %v", c.entry, took)
			assert.Less(t, took, 10*time.Second, "the kill was not seen")
			assert.Empty(t, jsonGoroutines(), "goroutines still running the JSON code")
		})
	}
}

// jsonGoroutines are the stacks of the goroutines running payload's or
// encoding/json's code.
func jsonGoroutines() []string {
	buf := make([]byte, 4<<20)
	var found []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "luarun/payload.") || strings.Contains(g, "encoding/json.") {
			found = append(found, g)
		}
	}
	return found
}
