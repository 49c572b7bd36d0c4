package main

// Two nodes of a cluster on loopback (issue 19): the cross-node round
// trip and one-way throughput of luarun processes, beside raw nats.go
// request/reply and publish/subscribe of the same 16-byte payload on the
// same in-process NATS server, in one run. Both nodes are runtimes in
// this process, each with its own NATS connection, as two luarun
// binaries would have; the raw baselines use two connections too.

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/log"
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

func clusterBench() []row {
	rounds, n := size(20000, 2000), size(200000, 20000)
	srv, err := cluster.StartServer("127.0.0.1:0")
	check(err)
	defer srv.Close()
	a, sa, closeA := clusterNode(srv.URL(), "a")
	defer closeA()
	b, sb, closeB := clusterNode(srv.URL(), "b")
	defer closeB()

	pong, err := b.Start(sb, "pong")
	check(err)
	res := runLoaded(a, sa, "ping", int64(pong.PID()), int64(rounds), clusterPayload)
	rtt := time.Duration(res[0].(float64) * float64(time.Second) / float64(rounds))
	rawRTT := rawRequestReply(srv.URL(), rounds)

	inbox, err := a.NewInbox()
	check(err)
	defer inbox.Close()
	sink, err := b.Start(sb, "sink", int64(n), int64(inbox.PID()))
	check(err)
	t0 := time.Now()
	runLoaded(a, sa, "stream", int64(sink.PID()), int64(n), clusterPayload)
	_, err = inbox.Receive(context.Background())
	check(err)
	stream := time.Since(t0)
	rawStream := rawPubSub(srv.URL(), n)

	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	return []row{
		{workload: fmt.Sprintf("cluster: round trip between processes on two nodes, %d after 1,000 (loopback, in-process NATS server)", rounds),
			luarun: fmtDur(rtt), baseline: fmtDur(rawRTT) + " (nats.go Request/Respond, the same payload)",
			ratio: fmt.Sprintf("%.2f× raw", float64(rtt)/float64(rawRTT)), target: "≤ 1.5× raw"},
		{workload: fmt.Sprintf("cluster: one process streams %d messages to one on another node", n),
			luarun: fmt.Sprintf("%.2fM msgs/s", rate(stream)/1e6), baseline: fmt.Sprintf("%.2fM msgs/s (nats.go Publish to a subscription)", rate(rawStream)/1e6),
			ratio: fmt.Sprintf("%.2f× raw", rate(stream)/rate(rawStream)), target: "≥ 0.7× raw"},
	}
}

// clusterNode starts a runtime on a new node named name, with the
// benchmark's script loaded, and waits until it hears another node.
func clusterNode(url, name string) (*luaproc.Runtime, *luaproc.Script, func()) {
	node, err := cluster.Join(context.Background(), cluster.Config{URL: url, Name: name})
	check(err)
	rt := luaproc.New(luaproc.Options{Cluster: node, Logger: log.New(io.Discard), Stdout: io.Discard})
	s, err := rt.LoadString("cluster.lua", clusterLua)
	check(err)
	return rt, s, func() {
		shutdown(rt)
		node.Close()
	}
}

// rawRequestReply is nats.go's round trip: one connection requests, the
// other responds with the payload, rounds times after 1,000.
func rawRequestReply(url string, rounds int) time.Duration {
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
	do(rounds)
	return time.Since(t0) / time.Duration(rounds)
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
