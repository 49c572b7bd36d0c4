package luaproc

// Benchmarks of the Lua layer, each beside its baseline in the same run:
//
//	YieldRoundTrip  Lua calls a Go command that completes at once, through
//	                the scheduler  vs  the floor: one bare gopher-lua
//	                coroutine resume/yield driven from Go.
//	MessageHop      two Lua processes bouncing a message  vs  two goroutines,
//	                each with its own LState, over channels.
//	Spawn           start a process that blocks in receive  vs  a goroutine
//	                with lua.NewState() doing the same.
//	IdleProcess     heap bytes per idle process (HeapAlloc delta after GC)
//	                vs  goroutine + lua.NewState().
//
// The performance issue sets targets for these; BENCHMARKS.md has figures.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/bench/idioms"
	"github.com/luarun/luarun/internal/cputime"
	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/payload"
)

func benchRuntime(b *testing.B) *Runtime {
	rt, err := New(Options{Logger: slog.New(slog.DiscardHandler), Stdout: nopWriter{}})
	require.NoError(b, err)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rt.Shutdown(ctx)
	})
	return rt
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func runBench(b *testing.B, rt *Runtime, src, entry string, args ...any) payload.Payloads {
	s, err := rt.LoadString("bench.lua", src)
	if err != nil {
		b.Fatal(err)
	}
	h, err := rt.Start(context.Background(), s, entry, args...)
	if err != nil {
		b.Fatal(err)
	}
	res, err := h.Wait(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func BenchmarkYieldRoundTrip(b *testing.B) {
	b.Run("luarun", func(b *testing.B) {
		rt := benchRuntime(b)
		rt.Register("bench.sync", func(c Call) error {
			c.Complete(nil)
			return nil
		})
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, `function main(n) for i = 1, n do bench.sync() end end`, "main", int64(b.N))
	})
	b.Run("floor-bare-gopher-lua", func(b *testing.B) {
		L := lua.NewState()
		defer L.Close()
		L.SetGlobal("sync", L.NewFunction(func(L *lua.LState) int { return L.Yield() }))
		if err := L.DoString(`function main(n) for i = 1, n do sync() end end`); err != nil {
			b.Fatal(err)
		}
		co, _ := L.NewThread()
		fn := L.GetGlobal("main").(*lua.LFunction)
		b.ReportAllocs()
		b.ResetTimer()
		st, err, _ := L.Resume(co, fn, lua.LNumber(b.N))
		for st == lua.ResumeYield && err == nil {
			st, err, _ = L.Resume(co, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
	})
}

const pingPongLua = `
function pong()
  while true do
    local m, from = process.receive()
    if m == 0 then return end
    process.send(from, m)
  end
end
function main(n)
  local p = process.spawn("pong")
  for i = 1, n do
    process.send(p, i)
    process.receive()
  end
  process.send(p, 0)
end`

// BenchmarkMessageHop reports per hop (one send and its receive); a round
// trip is two hops.
func BenchmarkMessageHop(b *testing.B) {
	b.Run("luarun", func(b *testing.B) {
		rt := benchRuntime(b)
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, pingPongLua, "main", int64(b.N/2+1))
	})
	// The same without the watchdog and the mailbox counting: what they cost.
	b.Run("luarun-unguarded", func(b *testing.B) {
		rt, err := New(Options{Logger: slog.New(slog.DiscardHandler), Stdout: nopWriter{}, NoWatchdog: true, MaxMailbox: -1})
		require.NoError(b, err)
		b.Cleanup(func() { rt.Shutdown(context.Background()) })
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, pingPongLua, "main", int64(b.N/2+1))
	})
	// The floor (bench/erlang.go's barePingPong): two coroutines
	// of one bare gopher-lua state pass the number back and forth,
	// resumed in turn by a Go loop — the Lua side of a hop with no
	// scheduler, mailbox or isolation.
	b.Run("floor-bare-gopher-lua", func(b *testing.B) {
		benchBarePingPong(b, b.N/2+1)
	})
	b.Run("goroutines+LState", func(b *testing.B) {
		ping, pong := make(chan lua.LValue), make(chan lua.LValue)
		mk := func(in, out chan lua.LValue) *lua.LState {
			L := lua.NewState()
			L.SetGlobal("recv", L.NewFunction(func(L *lua.LState) int { L.Push(<-in); return 1 }))
			L.SetGlobal("send", L.NewFunction(func(L *lua.LState) int { out <- L.Get(1); return 0 }))
			return L
		}
		Lping, Lpong := mk(pong, ping), mk(ping, pong)
		defer Lping.Close()
		defer Lpong.Close()
		done := make(chan error, 1)
		go func() {
			done <- Lpong.DoString(`while true do local m = recv(); if m == 0 then return end; send(m) end`)
		}()
		b.ReportAllocs()
		b.ResetTimer()
		Lping.SetGlobal("n", lua.LNumber(b.N/2+1))
		if err := Lping.DoString(`for i = 1, n do send(i); recv() end; send(0)`); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkRing reports per hop of a token around a ring of 1,000
// processes (the harness's ring row, as a go benchmark: countable by
// bench/instrcount.sh).
func BenchmarkRing(b *testing.B) {
	rt := benchRuntime(b)
	b.ReportAllocs()
	b.ResetTimer()
	runBench(b, rt, idioms.Ring, "main", int64(1000), int64(b.N))
}

// benchBarePingPong runs m round trips of the bare ping-pong floor.
func benchBarePingPong(b *testing.B, m int) {
	L := lua.NewState()
	defer L.Close()
	var slot lua.LValue
	L.SetGlobal("send", L.NewFunction(func(L *lua.LState) int { slot = L.Get(1); return 0 }))
	L.SetGlobal("receive", L.NewFunction(func(L *lua.LState) int { return L.Yield() }))
	if err := L.DoString(`
process = {send = send, receive = receive}
function ping(n) for i = 1, n do process.send(i); assert(process.receive() == i) end end
function pong() while true do process.send(process.receive()) end end`); err != nil {
		b.Fatal(err)
	}
	ponger, _ := L.NewThread()
	pinger, _ := L.NewThread()
	if _, err, _ := L.Resume(ponger, L.GetGlobal("pong").(*lua.LFunction)); err != nil { // waits in receive
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	st, err, _ := L.Resume(pinger, L.GetGlobal("ping").(*lua.LFunction), lua.LNumber(m))
	for st == lua.ResumeYield && err == nil {
		if _, err, _ = L.Resume(ponger, nil, slot); err != nil { // ponger sends it back
			b.Fatal(err)
		}
		st, err, _ = L.Resume(pinger, nil, slot)
	}
	if err != nil {
		b.Fatal(err)
	}
}

const idleLua = `function main() process.receive() end`

// BenchmarkSpawn: start a process and let it run until it waits in
// receive, per process. They are started in batches of 1,000, timed until
// the whole batch waits, then ended (a message each) with the timer
// stopped, so memory stays bounded.
func BenchmarkSpawn(b *testing.B) {
	const batch = 1000
	b.Run("luarun", func(b *testing.B) {
		rt := benchRuntime(b)
		s, _ := rt.LoadString("idle.lua", idleLua)
		benchSpawn(b, rt, s, batch)
	})
	// Each process requires a module file already compiled (by the first
	// process): the cost of require beside the spawn it is part of.
	b.Run("luarun+require", func(b *testing.B) {
		rt := benchRuntime(b)
		dir := b.TempDir()
		mod := "local M = {}\nfunction M.add(a, b) return a + b end\nfunction M.sub(a, b) return a - b end\nreturn M\n"
		if err := os.WriteFile(filepath.Join(dir, "mod.lua"), []byte(mod), 0o644); err != nil {
			b.Fatal(err)
		}
		main := filepath.Join(dir, "main.lua")
		if err := os.WriteFile(main, []byte(`function main() local m = require("mod"); process.receive() end`), 0o644); err != nil {
			b.Fatal(err)
		}
		s, err := rt.LoadFile(main)
		if err != nil {
			b.Fatal(err)
		}
		benchSpawn(b, rt, s, batch)
	})
	b.Run("goroutine+NewState", func(b *testing.B) {
		stop, ready := make(chan struct{}), make(chan struct{}, batch)
		var wg sync.WaitGroup
		b.ReportAllocs()
		b.ResetTimer()
		n := 0
		for i := range b.N {
			wg.Add(1)
			n++
			go func(stop chan struct{}) { defer wg.Done(); idleGoroutineReady(stop, ready) }(stop)
			if n == batch || i == b.N-1 {
				for range n {
					<-ready
				}
				n = 0
				b.StopTimer()
				close(stop)
				wg.Wait()
				stop = make(chan struct{})
				b.StartTimer()
			}
		}
	})
}

// benchSpawn starts b.N processes of s (entry main) in batches, each timed
// until all of the batch wait in receive.
func benchSpawn(b *testing.B, rt *Runtime, s *Script, batch int) {
	hs := make([]Handle, 0, batch)
	b.ReportAllocs()
	b.ResetTimer()
	steps := rt.SchedulerStats().Steps
	for i := range b.N {
		h, err := rt.Start(context.Background(), s, "main")
		if err != nil {
			b.Fatal(err)
		}
		hs = append(hs, h)
		if len(hs) == batch || i == b.N-1 {
			waitSteps(rt, steps+uint64(len(hs))) // each waits in receive
			b.StopTimer()
			for _, h := range hs {
				rt.Send(h.PID(), true)
			}
			for _, h := range hs {
				if _, err := h.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			hs = hs[:0]
			steps = rt.SchedulerStats().Steps
			b.StartTimer()
		}
	}
}

func idleGoroutine(stop chan struct{}) { idleGoroutineReady(stop, nil) }

// idleGoroutineReady is baseline A's idle process: a goroutine with its
// own LState, blocked in a Go recv function; ready (if not nil) hears
// when it got there.
func idleGoroutineReady(stop, ready chan struct{}) {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("recv", L.NewFunction(func(L *lua.LState) int {
		if ready != nil {
			ready <- struct{}{}
		}
		<-stop
		return 0
	}))
	L.DoString(`recv()`)
}

// BenchmarkIdleProcess reports heap bytes per idle process (HeapAlloc
// after GC, minus before, over b.N processes, at least 2,000). Its ns/op
// is the time to start one.
func BenchmarkIdleProcess(b *testing.B) {
	b.Run("luarun", func(b *testing.B) {
		n := max(b.N, 2000)
		rt := benchRuntime(b)
		s, _ := rt.LoadString("idle.lua", idleLua)
		before := heapAfterGC()
		for range n {
			if _, err := rt.Start(context.Background(), s, "main"); err != nil {
				b.Fatal(err)
			}
		}
		waitSteps(rt, uint64(n))
		b.ReportMetric(float64(heapAfterGC()-before)/float64(n), "heap-B/proc")
	})
	b.Run("goroutine+NewState", func(b *testing.B) {
		n := max(b.N, 2000)
		stop := make(chan struct{})
		started := make(chan struct{}, n)
		before := heapAfterGC()
		for range n {
			go func() { started <- struct{}{}; idleGoroutine(stop) }()
		}
		for range n {
			<-started
		}
		time.Sleep(50 * time.Millisecond) // let them reach recv
		b.ReportMetric(float64(heapAfterGC()-before)/float64(n), "heap-B/proc")
		close(stop)
	})
}

func heapAfterGC() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// waitSteps waits until the scheduler has stepped n processes (each idle
// process takes one step to reach its receive).
func waitSteps(rt *Runtime, n uint64) {
	for rt.SchedulerStats().Steps < n {
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkPcall: a protected call that does not block, per call: luarun
// runs it in a (reused) coroutine so that it could block; the baseline is
// gopher-lua's native pcall, which cannot.
func BenchmarkPcall(b *testing.B) {
	const src = `function main(n) local f = function(x) return x end for i = 1, n do pcall(f, i) end end`
	b.Run("luarun", func(b *testing.B) {
		rt := benchRuntime(b)
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, src, "main", int64(b.N))
	})
	b.Run("native-gopher-lua", func(b *testing.B) {
		L := lua.NewState()
		defer L.Close()
		if err := L.DoString(src); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		if err := L.CallByParam(lua.P{Fn: L.GetGlobal("main"), Protect: true}, lua.LNumber(b.N)); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkHTTPGet: one http.get of 1 KiB from a loopback server, per
// request, made in turn by one process  vs  one goroutine with a client
// whose transport has the same settings (commands.NewIO's). The
// difference is luarun's per-call cost: the yield, the command's
// arguments, its deadline, and the response table.
func BenchmarkHTTPGet(b *testing.B) {
	body := make([]byte, 1024)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	defer srv.Close()
	b.Run("luarun", func(b *testing.B) {
		rt, err := New(Options{Logger: slog.New(slog.DiscardHandler), Stdout: nopWriter{}, Allow: []string{"http"}})
		require.NoError(b, err)
		defer rt.Shutdown(context.Background())
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, `function main(url, n)
			for i = 1, n do
				local r, err = http.get(url)
				if not r then error(err) end
				if #r.body ~= 1024 then error("short body") end
			end
		end`, "main", srv.URL, int64(b.N))
	})
	for _, timeout := range []time.Duration{0, 30 * time.Second} {
		name := "goroutine-net/http"
		if timeout > 0 {
			name += "-timeout" // Client.Timeout: a deadline per request, as luarun's
		}
		b.Run(name, func(b *testing.B) { benchGoGet(b, srv.URL, timeout) })
	}
}

func benchGoGet(b *testing.B, url string, timeout time.Duration) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost, t.MaxIdleConns = 1024, 1024
	defer t.CloseIdleConnections()
	client := &http.Client{Transport: t, Timeout: timeout}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(data) != 1024 {
			b.Fatal("short body", err)
		}
	}
}

// BenchmarkLines: fs.lines over a file of 99-byte lines, per line.
func BenchmarkLines(b *testing.B) {
	path := filepath.Join(b.TempDir(), "lines.txt")
	block := []byte(strings.Repeat(strings.Repeat("x", 98)+"\n", 1000))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for n := b.N; n > 0; n -= 1000 {
		if _, err := f.Write(block[:min(n, 1000)*99]); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	rt, err := New(Options{Logger: slog.New(slog.DiscardHandler), Stdout: nopWriter{}, Allow: []string{"fs"}})
	require.NoError(b, err)
	b.Cleanup(func() { rt.Shutdown(context.Background()) })
	b.ResetTimer()
	res := runBench(b, rt, `function main(path) local k = 0; for _ in fs.lines(path) do k = k + 1 end return k end`, "main", path)
	if res[0] != int64(b.N) {
		b.Fatalf("counted %v lines of %d", res[0], b.N)
	}
}

// embedHandlerLua is bench -only embed's handler.
const embedHandlerLua = `
function handle(method, key)
  local v = db.get(key)
  if v == nil then return 404, "no item " .. key .. "\n" end
  return 200, string.format("%s %s: %s\n", method, key, v)
end`

// BenchmarkEmbedRequest is bench -only embed's request without HTTP: a
// process per request, with a cancellable context as net/http gives,
// calling a Go command that a goroutine answers. call: Runtime.Call;
// start: Start and Wait; pool: the baseline, a channel of LStates with
// the script loaded once and db.get a direct LGFunction, as gopher-lua is
// embedded without luarun (bench/embed.go's pool); call-sync: Call with
// db.get answered in its handler, as the pool answers it (what the
// goroutine's hand-off costs). Run in parallel (one caller per P), as a
// server's connections are.
func BenchmarkEmbedRequest(b *testing.B) {
	rt, _, _ := newTestRuntime(b, Options{})
	require.NoError(b, rt.Register("db.get", func(c Call) error {
		go c.Complete("value-" + c.Args[0].(string))
		return nil
	}))
	s, err := rt.LoadString("handler.lua", embedHandlerLua)
	require.NoError(b, err)
	syncRT, _, _ := newTestRuntime(b, Options{})
	require.NoError(b, syncRT.Register("db.get", func(c Call) error {
		c.Complete("value-" + c.Args[0].(string))
		return nil
	}))
	syncS, err := syncRT.LoadString("handler.lua", embedHandlerLua)
	require.NoError(b, err)
	pool := newEmbedPool(b)
	run := map[string]func(ctx context.Context) ([]any, error){
		"pool": pool.call,
		"call": func(ctx context.Context) ([]any, error) { return rt.Call(ctx, s, "handle", "GET", "k42") },
		"call-sync": func(ctx context.Context) ([]any, error) {
			return syncRT.Call(ctx, syncS, "handle", "GET", "k42")
		},
		"start": func(ctx context.Context) ([]any, error) {
			h, err := rt.Start(ctx, s, "handle", "GET", "k42")
			if err != nil {
				return nil, err
			}
			return h.Wait(ctx)
		},
	}
	for _, name := range []string{"pool", "call", "call-sync", "start"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ctx, cancel := context.WithCancel(context.Background())
					res, err := run[name](ctx)
					cancel()
					if err != nil || len(res) != 2 {
						b.Errorf("%v, %v", res, err)
						return
					}
				}
			})
		})
	}
}

// embedPool is BenchmarkEmbedRequest's baseline: LStates in a channel.
type embedPool chan *lua.LState

func newEmbedPool(b *testing.B) embedPool {
	pool := make(embedPool, 64)
	for range cap(pool) {
		L := lua.NewState()
		db := L.NewTable()
		L.SetField(db, "get", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LString("value-" + L.CheckString(1)))
			return 1
		}))
		L.SetGlobal("db", db)
		require.NoError(b, L.DoString(embedHandlerLua))
		pool <- L
	}
	b.Cleanup(func() {
		for range cap(pool) {
			(<-pool).Close()
		}
	})
	return pool
}

// call runs handle in a pooled state and converts its results as Call
// returns them.
func (pool embedPool) call(ctx context.Context) ([]any, error) {
	L := <-pool
	defer func() { pool <- L }()
	err := L.CallByParam(lua.P{Fn: L.GetGlobal("handle"), NRet: 2, Protect: true},
		lua.LString("GET"), lua.LString("k42"))
	if err != nil {
		return nil, err
	}
	res := []any{int64(lua.LVAsNumber(L.Get(-2))), lua.LVAsString(L.Get(-1))}
	L.Pop(2)
	return res, nil
}

// reportCPU reports the process's CPU time per operation (cpu-ns/op)
// from now to the call of the function it returns: a load-independent
// figure where wall time (ns/op) counts the waits of a busy host.
func reportCPU(b *testing.B) func() {
	start, ok := cputime.Process()
	return func() {
		if end, ok2 := cputime.Process(); ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
