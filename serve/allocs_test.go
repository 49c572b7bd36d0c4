package serve_test

// The cost per request in allocations, which a loaded machine does not
// change (unlike requests per second): a guard against a change that
// puts a fresh cost back on every request. BenchmarkServeHello gives the
// figures beside net/http's.

import (
	"bufio"
	"net"
	"runtime"
	"testing"
)

// A hello request allocates at most 50 times, the server's and the
// runtime's together (40 at the time of writing; net/http's own handler
// about 22; 62 before the request path was trimmed).
func TestServeHelloAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	if testing.Short() {
		t.Skip("serves a thousand requests")
	}
	e := start(t, serveScript("hello", "nil", `
function hello(req)
  return "hello " .. (req.query.name or "world")
end`), "listen")
	c, err := net.DialTimeout("tcp", e.addr(), hung)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /?name=bench HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
	r := bufio.NewReader(c)
	body := make([]byte, len("hello bench"))
	serve := func(n int) {
		for range n {
			if err := roundTrip(c, r, req, body, "hello bench"); err != nil {
				t.Fatal(err)
			}
		}
	}
	serve(200) // warm: recycled states, buffers
	const n = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	serve(n)
	runtime.ReadMemStats(&after)
	perRequest := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("%.1f allocations per request", perRequest)
	if perRequest > 50 {
		t.Errorf("%.1f allocations per request, want at most 50", perRequest)
	}
}
