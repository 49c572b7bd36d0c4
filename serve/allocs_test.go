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

// A hello request allocates at most 35 times, the server's and the
// runtime's together (27 at the time of writing; net/http's own handler
// about 22; 62 before the request path was trimmed, 37 before the
// handler's entry name, its first results and the 7-key request table
// stopped allocating, 33 before a string answer's Content-Type came
// from net/http's sniffing and its strings stopped being boxed twice).
func TestServeHelloAllocs(t *testing.T) {
	e := start(t, serveScript("hello", "nil", `
function hello(req)
  return "hello " .. (req.query.name or "world")
end`), "listen")
	checkAllocs(t, e.addr(), "/?name=bench", "hello bench", 35)
}

// A GET of the key-value shape (the request process asks a store
// process with process.call) allocates at most 60 times (51 at the time
// of writing; 74 when the store's step and the handler's last one ran
// on a worker, which the connection's goroutine then waited for; 60
// before the string answer's header and the strings boxed twice).
func TestServeKVAllocs(t *testing.T) {
	// opts: nil, once main has spawned and registered the store
	opts := `(function() assert(process.register("store", process.spawn("store"))) end)()`
	e := start(t, serveScript("kv", opts, `
function store()
  local data = {key = "value-of-key"}
  while true do
    local msg, _, kind, call = process.receive()
    if kind == "call" then process.reply(call, {value = data[msg.key]}) end
  end
end
function kv(req)
  local r = process.call("store", {op = "get", key = req.path:sub(5)})
  return r.value
end`), "listen")
	checkAllocs(t, e.addr(), "/kv/key", "value-of-key", 60)
}

// checkAllocs serves 1,000 GETs of path (answered want) over one
// keep-alive connection and fails if they allocate more than most times
// each on average.
func checkAllocs(t *testing.T, addr, path, want string, most float64) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	if testing.Short() {
		t.Skip("serves a thousand requests")
	}
	c, err := net.DialTimeout("tcp", addr, hung)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: bench\r\nUser-Agent: bench\r\n\r\n")
	r := bufio.NewReader(c)
	body := make([]byte, len(want))
	serve := func(n int) {
		for range n {
			if err := roundTrip(c, r, req, body, want); err != nil {
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
	if perRequest > most {
		t.Errorf("%.1f allocations per request, want at most %v", perRequest, most)
	}
}
