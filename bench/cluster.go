package main

// Two nodes of a cluster on loopback (issue 19): the cross-node round
// trip and one-way throughput of luarun processes, beside raw nats.go
// request/reply and publish/subscribe of the same 16-byte payload on the
// same in-process NATS server, in one run. Both nodes are runtimes in
// this process, each with its own NATS connection, as two luarun
// binaries would have; the raw baselines use two connections too.
// Beside the stream's throughput it reports the process's CPU time per
// message, the same measure for both sides: the in-process server's and
// both clients' work are in both.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/luarun/luarun/cluster"
	"github.com/luarun/luarun/luaproc"
)

// clusterPayload is the message both sides send.
const clusterPayload = "0123456789abcdef"

const clusterLua = `
function pong()
  while true do
    local msg, from = process.receive()
    if msg == "stop" then return end
    process.send(from, msg)
  end
end
function ping(peer, n, payload)
  repeat time.sleep(0.01) until #process.nodes() == 2
  for i = 1, 1000 do process.send(peer, payload); process.receive() end -- warm-up
  local t0 = time.monotonic()
  for i = 1, n do process.send(peer, payload); process.receive() end
  local dt = time.monotonic() - t0
  process.send(peer, "stop")
  return dt
end
function sink(n, boss)
  for i = 1, n do process.receive() end
  process.send(boss, "all came")
end
function stream(peer, n, payload)
  for i = 1, n do assert(process.send(peer, payload)) end
end`

// clusterRounds is how many rounds the round trip takes: each round
// runs luarun's and raw NATS's in turn, and the row reports the median
// of the rounds' ratios, as the Erlang rows do (the host's speed drifts
// within a run).
const clusterRounds = 5

// streamRounds is how many rounds the stream takes, after one of each
// side not counted (the receiving node's heap and the batch buffers
// grow in the first). A round is short (about 0.1 s a side), so a load
// spike can halve one side of one round: the rounds alternate which
// side goes first, and the row reports the median of the rounds'
// ratios.
const streamRounds = 11

func clusterBench() []row {
	return append(clusterRows(nil, "no cluster secret"), clusterRows([]byte("bench-secret"), "with a cluster secret: an HMAC-SHA256 on every batch")...)
}

// clusterRows are the round trip's and the stream's rows, the nodes
// having secret (nil: none), which how says.
func clusterRows(secret []byte, how string) []row {
	trips, n := size(4000, 400), size(200000, 20000)
	srv, err := cluster.StartServer("127.0.0.1:0")
	check(err)
	defer srv.Close()
	a, sa, nodeA, closeA := clusterNode(srv.URL(), "a", secret)
	defer closeA()
	b, sb, _, closeB := clusterNode(srv.URL(), "b", secret)
	defer closeB()

	load0 := loadAverage()
	var rtt, rawRTT rounds
	for range clusterRounds {
		rtt = append(rtt, clusterRoundTrip(a, sa, b, sb, trips))
		rawRTT = append(rawRTT, rawRequestReply(srv.URL(), trips))
	}
	published := nodeA.Stats().Published
	stream, raw := streamFigures(n,
		func() time.Duration { return clusterStream(a, sa, b, sb, n) },
		func() time.Duration { return rawPubSub(srv.URL(), n) })
	published = nodeA.Stats().Published - published
	rate := func(r rounds) string { return fmt.Sprintf("%.2fM msgs/s", float64(n)/r.median().Seconds()/1e6) }
	return []row{
		{workload: fmt.Sprintf("cluster: round trip between processes on two nodes, %d after 1,000 (loopback, in-process NATS server; median of %d rounds, each beside raw; %s)", trips, clusterRounds, how),
			luarun: fmtDur(rtt.median()), baseline: fmtDur(rawRTT.median()) + " (nats.go Request/Respond, the same payload)",
			ratio: ratioOf(rtt, rawRTT) + " raw", target: "≤ 1.5× raw"},
		{workload: fmt.Sprintf("cluster: one process streams %d messages to one on another node (median of %d alternated rounds after a warm-up; %s; load %s → %s)", n, streamRounds, how, load0, loadAverage()),
			luarun:   fmt.Sprintf("%s, CPU %s/msg, %.0f messages per NATS message", rate(stream.wall), fmtDur(stream.cpu.median()), float64((streamRounds+1)*n)/float64(published)),
			baseline: fmt.Sprintf("%s, CPU %s/msg (nats.go Publish to a subscription)", rate(raw.wall), fmtDur(raw.cpu.median())),
			ratio:    ratioOf(raw.wall, stream.wall) + " raw; CPU/msg: raw's ÷ luarun's " + ratioOf(raw.cpu, stream.cpu),
			target:   "≥ 0.7× raw"},
	}
}

// streamSide is one side's rounds of the stream: wall time of the whole
// stream, and the process's CPU time per message.
type streamSide struct{ wall, cpu rounds }

// streamFigures runs a warm-up round of each side, then streamRounds
// rounds of both, luarun's first in the even ones and raw's in the odd.
func streamFigures(n int, luarun, raw func() time.Duration) (l, r streamSide) {
	measure(n, luarun)
	measure(n, raw)
	for i := range streamRounds {
		first, second, fs, ss := luarun, raw, &l, &r
		if i%2 == 1 {
			first, second, fs, ss = raw, luarun, &r, &l
		}
		fs.add(measure(n, first))
		ss.add(measure(n, second))
	}
	return l, r
}

func (s *streamSide) add(wall, cpu time.Duration) {
	s.wall, s.cpu = append(s.wall, wall), append(s.cpu, cpu)
}

// measure runs f, which streams n messages and returns its wall time,
// and returns that with the CPU time this process spent per message,
// from a collection before f to one after it (so each side pays for the
// garbage it made). The process's CPU time is far steadier than the wall
// time on a loaded machine: it counts what the work cost, not how long
// it waited for a core.
func measure(n int, f func() time.Duration) (wall, cpu time.Duration) {
	runtime.GC()
	c0 := cpuTime()
	wall = f()
	runtime.GC()
	return wall, (cpuTime() - c0) / time.Duration(n)
}

// loadAverage is the 1-minute load average (Linux), or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// clusterRoundTrip is the time of one round trip between a process on
// node a and one on node b, over trips after 1,000.
func clusterRoundTrip(a *luaproc.Runtime, sa *luaproc.Script, b *luaproc.Runtime, sb *luaproc.Script, trips int) time.Duration {
	pong, err := b.Start(context.Background(), sb, "pong")
	check(err)
	res := runLoaded(a, sa, "ping", int64(pong.PID()), int64(trips), clusterPayload)
	return time.Duration(res[0].(float64) * float64(time.Second) / float64(trips))
}

// clusterStream is the time from the start of a process on node a that
// sends n messages to one on node b until b's has received them all.
func clusterStream(a *luaproc.Runtime, sa *luaproc.Script, b *luaproc.Runtime, sb *luaproc.Script, n int) time.Duration {
	inbox, err := a.NewInbox()
	check(err)
	defer inbox.Close()
	sink, err := b.Start(context.Background(), sb, "sink", int64(n), int64(inbox.PID()))
	check(err)
	t0 := time.Now()
	runLoaded(a, sa, "stream", int64(sink.PID()), int64(n), clusterPayload)
	_, err = inbox.Receive(context.Background())
	check(err)
	return time.Since(t0)
}

// clusterNode starts a runtime on a new node named name, with the
// benchmark's script loaded, and the cluster secret (nil: none).
func clusterNode(url, name string, secret []byte) (*luaproc.Runtime, *luaproc.Script, *cluster.Node, func()) {
	node, err := cluster.Join(context.Background(), cluster.Config{URL: url, Name: name, Secret: secret})
	check(err)
	rt, err := luaproc.New(luaproc.Options{Cluster: node, Logger: slog.New(slog.DiscardHandler), Stdout: io.Discard})
	check(err)
	s, err := rt.LoadString("cluster.lua", clusterLua)
	check(err)
	return rt, s, node, func() {
		shutdown(rt)
		node.Close()
	}
}

// rawRequestReply is nats.go's round trip: one connection requests, the
// other responds with the payload, trips times after 1,000.
func rawRequestReply(url string, trips int) time.Duration {
	req, resp := rawConn(url), rawConn(url)
	defer req.Close()
	defer resp.Close()
	sub, err := resp.Subscribe("bench.echo", func(m *nats.Msg) { m.Respond(m.Data) })
	check(err)
	defer sub.Unsubscribe()
	check(resp.Flush())
	data := []byte(clusterPayload)
	do := func(k int) {
		for range k {
			_, err := req.Request("bench.echo", data, 10*time.Second)
			check(err)
		}
	}
	do(1000)
	t0 := time.Now()
	do(trips)
	return time.Since(t0) / time.Duration(trips)
}

// rawPubSub is nats.go's one-way stream: one connection publishes n
// messages, the other's subscription counts them; the time until the
// last is counted.
func rawPubSub(url string, n int) time.Duration {
	pub, subc := rawConn(url), rawConn(url)
	defer pub.Close()
	defer subc.Close()
	var got atomic.Int64
	done := make(chan struct{})
	sub, err := subc.Subscribe("bench.sink", func(*nats.Msg) {
		if got.Add(1) == int64(n) {
			close(done)
		}
	})
	check(err)
	defer sub.Unsubscribe()
	check(sub.SetPendingLimits(-1, -1)) // as a node's: count, never drop
	check(subc.Flush())
	data := []byte(clusterPayload)
	t0 := time.Now()
	for range n {
		check(pub.Publish("bench.sink", data))
	}
	<-done
	return time.Since(t0)
}

func rawConn(url string) *nats.Conn {
	nc, err := nats.Connect(url)
	check(err)
	return nc
}
