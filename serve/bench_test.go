package serve_test

// Benchmarks of http.serve's cost per request beside Go's net/http, in
// the same run: serial keep-alive requests over one raw TCP connection
// (no client library's cost in the figures, and a client that does not
// allocate), so allocs/op and B/op are the server's and ns/op is one
// request's round trip. The wall-clock ratio swings on a loaded
// machine; allocs/op and B/op do not, and cpu-ns/op (the test process's
// CPU time per request, client included) much less.
//
//	go test ./serve -run '^$' -bench 'Serve(Hello|KV)' -benchmem
//	go test ./serve -run '^$' -bench ServeHello/luarun -cpuprofile cpu.out -memprofile mem.out

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/luarun/luarun/internal/cputime"
	"github.com/luarun/luarun/luaproc"
)

const benchLua = `
function hello(req)
  return "hello " .. (req.query.name or "world")
end
function store()
  process.register("store")
  local data = {}
  while true do
    local msg, _, kind, call = process.receive()
    if kind == "call" then
      if msg.op == "put" then data[msg.key] = msg.value end
      process.reply(call, {value = data[msg.key]})
    end
  end
end
function kv(req)
  local r = process.call("store", {op = "get", key = req.path:sub(5)})
  if r.value == nil then return {status = 404} end
  return r.value
end
function main(inbox, entry)
  if entry == "kv" then
    local store = process.spawn("store")
    assert(process.call(store, {op = "put", key = "key", value = "value-of-key"}))
  end
  local srv = assert(http.serve("127.0.0.1:0", entry))
  process.send(inbox, srv.addr)
  process.receive()
end`

// BenchmarkServeHello is the hello handler: luarun's http.serve beside
// a net/http handler writing the same.
func BenchmarkServeHello(b *testing.B) {
	const path = "/?name=bench"
	b.Run("luarun", func(b *testing.B) {
		benchLuarun(b, "hello", path, "hello bench")
	})
	b.Run("nethttp", func(b *testing.B) {
		addr := benchGoServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			name := r.URL.Query().Get("name")
			if name == "" {
				name = "world"
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "hello "+name)
		}))
		benchRequests(b, addr, path, "hello bench", nil)
	})
}

// BenchmarkServeKV is a GET through process.call to a store process,
// beside a net/http handler reading a map behind a mutex.
func BenchmarkServeKV(b *testing.B) {
	const path = "/kv/key"
	b.Run("luarun", func(b *testing.B) {
		benchLuarun(b, "kv", path, "value-of-key")
	})
	b.Run("gomap", func(b *testing.B) {
		var mu sync.Mutex
		data := map[string]string{"key": "value-of-key"}
		addr := benchGoServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			v, ok := data[strings.TrimPrefix(r.URL.Path, "/kv/")]
			mu.Unlock()
			if !ok {
				w.WriteHeader(404)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, v)
		}))
		benchRequests(b, addr, path, "value-of-key", nil)
	})
}

// benchLuarun loads path from benchLua's server of entry, reporting the
// workers woken per request beside benchRequests' figures (wakeups/op:
// each is a hand-off from the connection's goroutine to a worker).
func benchLuarun(b *testing.B, entry, path, want string) {
	addr, rt := benchServer(b, entry)
	var w0 uint64
	benchRequests(b, addr, path, want, func(start bool) {
		if w := rt.SchedulerStats().Wakeups; start {
			w0 = w
		} else {
			b.ReportMetric(float64(w-w0)/float64(b.N), "wakeups/op")
		}
	})
}

// benchServer runs benchLua's main serving entry; the runtime shuts
// down with the benchmark.
func benchServer(b *testing.B, entry string) (string, *luaproc.Runtime) {
	b.Helper()
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Allow: []string{"listen"},
		Logger: slog.New(slog.DiscardHandler), Stdout: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hung)
		defer cancel()
		rt.Shutdown(ctx)
	})
	in, err := rt.NewInbox()
	if err != nil {
		b.Fatal(err)
	}
	s, err := rt.LoadString("bench.lua", benchLua)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rt.Start(context.Background(), s, "main", int64(in.PID()), entry); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hung)
	defer cancel()
	m, err := in.Receive(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return m.Value.(string), rt
}

// benchGoServer serves h with net/http until the benchmark ends.
func benchGoServer(b *testing.B, h http.Handler) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	b.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String()
}

// benchRequests sends b.N serial GETs of path over one keep-alive
// connection and checks each answer is 200 with body want; mark (if
// set) is called as the timed loop starts (true) and ends (false).
func benchRequests(b *testing.B, addr, path, want string, mark func(start bool)) {
	c, err := net.DialTimeout("tcp", addr, hung)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
	r := bufio.NewReader(c)
	body := make([]byte, len(want))
	for range 100 { // warm up: recycled states, connection buffers
		if err := roundTrip(c, r, req, body, want); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ok := cputime.Process()
	if mark != nil {
		mark(true)
	}
	for range b.N {
		if err := roundTrip(c, r, req, body, want); err != nil {
			b.Fatal(err)
		}
	}
	if mark != nil {
		mark(false)
	}
	if cpu1, ok1 := cputime.Process(); ok && ok1 {
		// the whole process's CPU (server, client, runtime): on a loaded
		// machine a steadier figure than ns/op, which waits its turn
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

var (
	status200     = []byte("HTTP/1.1 200 ")
	contentLength = []byte("Content-Length: ")
)

// roundTrip writes req and reads one response into body (whose length
// is the expected one), allocating nothing when all goes well.
func roundTrip(c net.Conn, r *bufio.Reader, req, body []byte, want string) error {
	c.SetDeadline(time.Now().Add(hung))
	if _, err := c.Write(req); err != nil {
		return err
	}
	length := -1
	for first := true; ; first = false {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case first && !bytes.HasPrefix(line, status200):
			return fmt.Errorf("status line %q", line)
		case len(line) == 0:
			if length != len(body) {
				return fmt.Errorf("Content-Length %d, want %d", length, len(body))
			}
			if _, err := io.ReadFull(r, body); err != nil {
				return err
			}
			if string(body) != want {
				return fmt.Errorf("body %q, want %q", body, want)
			}
			return nil
		case len(line) > len(contentLength) && bytes.EqualFold(line[:len(contentLength)], contentLength):
			length = atoi(line[len(contentLength):])
		}
	}
}

// atoi is a decimal's value, -1 if it is not one.
func atoi(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
