package cluster_test

// BenchmarkStream: the cluster's one-way stream beside raw NATS, in one
// run on one in-process server (bench/cluster.go's row, as a Go
// benchmark to profile). luarun: a Lua process on node a sends b.N
// 16-byte strings to one on node b, which tells an Inbox when it has
// them all; raw: one nats.go connection publishes b.N of the same
// payload to another's subscription. Both report the process's CPU time
// per message (cpu-ns/msg: the server's and both ends' work), which a
// loaded machine disturbs far less than ns/op, and allocs/op, which it
// does not disturb at all.
//
//	go test ./cluster -run '^$' -bench Stream -benchmem -count 5
//	go test ./cluster -run '^$' -bench Stream/luarun -cpuprofile cpu.out -memprofile mem.out

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/luarun/luarun/cluster"
	"github.com/luarun/luarun/internal/cputime"
	"github.com/luarun/luarun/luaproc"
)

const streamPayload = "0123456789abcdef"

const streamLua = `
function sink(n, boss)
  for i = 1, n do process.receive() end
  process.send(boss, "all came")
end
function stream(peer, n, payload)
  repeat time.sleep(0.01) until #process.nodes() == 2
  for i = 1, n do assert(process.send(peer, payload)) end
end`

func BenchmarkStream(b *testing.B) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close) // after the nodes' cleanups
	b.Run("luarun", func(b *testing.B) {
		stream := luarunStream(b, srv.URL())
		stream(1000) // warm-up: the heaps and batch buffers grow
		timeStream(b, func() { stream(b.N) })
	})
	b.Run("raw", func(b *testing.B) {
		stream := rawStream(b, srv.URL())
		stream(1000)
		timeStream(b, func() { stream(b.N) })
	})
}

// timeStream times stream, reporting allocs/op and cpu-ns/msg.
func timeStream(b *testing.B, stream func()) {
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNow(b)
	stream()
	b.StopTimer()
	b.ReportMetric(float64(cpuNow(b)-cpu0)/float64(b.N), "cpu-ns/msg")
}

// luarunStream starts two nodes with a runtime each and returns a
// function that streams n messages from a process on the first to one
// on the second and returns when the second has them all.
func luarunStream(b *testing.B, url string) func(n int) {
	ra, rb := benchNode(b, url, "a"), benchNode(b, url, "b")
	sa, err := ra.LoadString("stream.lua", streamLua)
	if err != nil {
		b.Fatal(err)
	}
	sb, err := rb.LoadString("stream.lua", streamLua)
	if err != nil {
		b.Fatal(err)
	}
	inbox, err := ra.NewInbox()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { inbox.Close() })
	return func(n int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sink, err := rb.Start(ctx, sb, "sink", int64(n), int64(inbox.PID()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := start(ctx, ra, sa, "stream", int64(sink.PID()), int64(n), streamPayload); err != nil {
			b.Fatal(err)
		}
		if _, err := inbox.Receive(ctx); err != nil {
			b.Fatal("the sink did not get them all: ", err)
		}
	}
}

// benchNode starts a runtime on a new node of the cluster at url, with
// the default heartbeat (the tests' 100 ms is too short for a loaded
// machine under a long stream: a node is down after 4 beats unheard).
func benchNode(b *testing.B, url, name string) *luaproc.Runtime {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	n, err := cluster.Join(ctx, cluster.Config{URL: url, Name: name})
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Cluster: n, Logger: slog.New(slog.DiscardHandler), Stdout: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			b.Error(err)
		}
		n.Close()
	})
	return rt
}

// start starts entry on rt with args and waits for its end.
func start(ctx context.Context, rt *luaproc.Runtime, s *luaproc.Script, entry string, args ...any) ([]any, error) {
	h, err := rt.Start(ctx, s, entry, args...)
	if err != nil {
		return nil, err
	}
	return h.Wait(ctx)
}

// rawStream connects two nats.go clients and returns a function that
// publishes n messages from one to the other's subscription and returns
// when it has them all.
func rawStream(b *testing.B, url string) func(n int) {
	pub, subc := rawConn(b, url), rawConn(b, url)
	var got, want atomic.Int64
	done := make(chan struct{}, 1)
	sub, err := subc.Subscribe("bench.sink", func(*nats.Msg) {
		if got.Add(1) == want.Load() {
			done <- struct{}{}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil { // as a node's: count, never drop
		b.Fatal(err)
	}
	if err := subc.Flush(); err != nil {
		b.Fatal(err)
	}
	data := []byte(streamPayload)
	return func(n int) {
		got.Store(0)
		want.Store(int64(n))
		for range n {
			if err := pub.Publish("bench.sink", data); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-done:
		case <-time.After(time.Minute):
			b.Fatalf("the subscription got %d of %d", got.Load(), n)
		}
	}
}

func rawConn(b *testing.B, url string) *nats.Conn {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	return nc
}

// cpuNow is the CPU time the process has used.
func cpuNow(b *testing.B) time.Duration {
	cpu, ok := cputime.Process()
	if !ok {
		b.Skip("no CPU time on this system")
	}
	return cpu
}
