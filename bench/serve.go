package main

// The serving workload of issue 28: requests per second and latency of
// http.serve beside Go's net/http, driven by the same load generator in
// the same run, in interleaved rounds whose ratios' median is reported
// (wrk when installed — one thread, 50 keep-alive connections — else a
// Go generator with the same shape), and beside nginx with its Lua module
// when that is installed.
//
//   - hello: `return "hello " .. (req.query.name or "world")`, a process
//     per request, against a Go handler writing the same (on a plain
//     net/http server, and on one with http.serve's read and idle
//     timeouts); luarun as the command serving a script (servecmd.go:
//     the targets' rows), and embedded in this program;
//   - kv GET: a request process asks a store process with process.call
//     (scripts/kvstore.lua's shape) against a Go map behind a mutex;
//     p99 latency reported for both.
//
// serveconns.go holds 2,000 keep-alive connections open, and serveecho.go
// measures a TCP echo service.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/luarun/luarun/luaproc"
	"github.com/luarun/luarun/serve"
)

const serveLua = `
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
  local key = req.path:sub(5)
  if req.method == "PUT" then
    process.call("store", {op = "put", key = key, value = req.body})
    return {status = 204}
  end
  local r = process.call("store", {op = "get", key = key})
  if r.value == nil then return {status = 404} end
  return r.value
end
function main(inbox, entry)
  if entry == "kv" then process.spawn("store") end
  local srv = assert(http.serve("127.0.0.1:0", entry))
  process.send(inbox, srv.addr)
  process.receive()
end`

// load is one load generator run's result.
type load struct {
	rps     float64
	p50     time.Duration
	p99     time.Duration
	non2xx  int
	errText string
}

func (l load) String() string {
	if l.errText != "" {
		return l.errText
	}
	s := fmt.Sprintf("%.0f req/s, p50 %s, p99 %s", l.rps, fmtDur(l.p50), fmtDur(l.p99))
	if l.non2xx > 0 {
		s += fmt.Sprintf(" (%d not 2xx)", l.non2xx)
	}
	return s
}

func serveBench() []row {
	dur := time.Duration(size(3, 2)) * time.Second
	rounds := size(5, 1)
	gen := "go generator, 50 connections"
	if wrkPath() != "" {
		gen = "wrk -t1 -c50"
	}
	fmt.Fprintf(os.Stderr, "serve: load generator %s, %v per run, %d interleaved rounds\n", gen, dur, rounds)
	var helloC, helloL, helloG, helloT, helloN, kvC, kvL, kvG []cpuLoad
	sc := newServeCommand()
	defer sc.close()
	for r := range rounds {
		run := func(name string, into *[]cpuLoad, l cpuLoad) {
			fmt.Fprintf(os.Stderr, "serve: round %d %s: %s\n", r+1, name, l)
			*into = append(*into, l)
		}
		run("hello luarun command", &helloC, sc.run("hello", dur, "/?name=bench", nil))
		run("hello luarun embedded", &helloL, luarunServe("hello", dur, "/?name=bench", nil))
		run("hello net/http", &helloG, goServe(dur, "/?name=bench", helloHandler))
		run("hello net/http, timeouts", &helloT, goServeWith(withTimeouts, dur, "/?name=bench", helloHandler))
		run("hello nginx+lua", &helloN, cpuLoad{load: nginxServe(dur)})
		putFirst := func(addr string) { putKey("http://" + addr + "/kv/key") }
		run("kv luarun command", &kvC, sc.run("kv", dur, "/kv/key", putFirst))
		run("kv luarun embedded", &kvL, luarunServe("kv", dur, "/kv/key", putFirst))
		run("kv Go map", &kvG, goServe(dur, "/kv/key", newMapServer().ServeHTTP))
	}
	of := fmt.Sprintf(" (%s, median of %d interleaved rounds)", gen, rounds)
	hc, hl, kc := medianLoad(helloC).String(), medianLoad(helloL).String(), medianLoad(kvC).String()
	rows := []row{
		{workload: "serve hello, the luarun command" + of, luarun: hc, baseline: "net/http: " + medianLoad(helloG).String(),
			ratio: roundRatios(helloC, helloG), target: ">= 0.8x net/http"},
		{workload: "serve hello, the luarun command vs net/http with http.serve's read and idle timeouts", luarun: hc,
			baseline: "net/http, timeouts: " + medianLoad(helloT).String(), ratio: roundRatios(helloC, helloT), target: "-"},
		{workload: "serve hello, http.serve embedded in a Go program (Go's collector pace) vs net/http", luarun: hl,
			baseline: "net/http: " + medianLoad(helloG).String(), ratio: roundRatios(helloL, helloG), target: "-"},
	}
	if ng := medianLoad(helloN); ng.rps > 0 {
		rows = append(rows, row{workload: "serve hello, the luarun command vs nginx+lua", luarun: hc, baseline: "nginx+lua: " + ng.String(),
			ratio: roundRatios(helloC, helloN), target: "moonshot >= 1.0x"})
	} else {
		rows = append(rows, row{workload: "serve hello vs nginx+lua", luarun: "-", baseline: ng.errText, ratio: "-", target: "-"})
	}
	return append(rows,
		row{workload: "serve kv GET via process.call, the luarun command" + of, luarun: kc,
			baseline: "Go map+mutex: " + medianLoad(kvG).String(), ratio: roundRatios(kvC, kvG), target: ">= 0.5x"},
		row{workload: "serve kv GET, http.serve embedded in a Go program vs the Go map", luarun: medianLoad(kvL).String(),
			baseline: "Go map+mutex: " + medianLoad(kvG).String(), ratio: roundRatios(kvL, kvG), target: "-"},
	)
}

func helloHandler(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		name = "world"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "hello "+name)
}

// luarunServe serves entry of serveLua and loads path.
func luarunServe(entry string, dur time.Duration, path string, prepare func(addr string)) cpuLoad {
	addr, stop := startServer(serveLua, entry)
	defer stop()
	if prepare != nil {
		prepare(addr)
	}
	return loadWithCPU("http://"+addr+path, dur)
}

// loadWithCPU is runLoad with the CPU time this process spent on each
// request (the server's when it runs in this process).
func loadWithCPU(url string, dur time.Duration) cpuLoad {
	cpu0 := cpuTime()
	l := cpuLoad{load: runLoad(url, dur)}
	if n := l.rps * dur.Seconds(); n > 0 {
		l.cpu = time.Duration(float64(cpuTime()-cpu0) / n)
	}
	return l
}

// startServer runs main(inbox, entry) of src, which sends the address it
// serves on; stop shuts the runtime down.
func startServer(src, entry string) (addr string, stop func()) {
	rt, err := luaproc.New(luaproc.Options{Workers: *workers, Allow: []string{"listen"}, Logger: quietLogger(), Stdout: io.Discard})
	check(err)
	in, err := rt.NewInbox()
	check(err)
	s, err := rt.LoadString("serve.lua", src)
	check(err)
	_, err = rt.Start(context.Background(), s, "main", int64(in.PID()), entry)
	check(err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := in.Receive(ctx)
	check(err)
	return m.Value.(string), func() { shutdown(rt) }
}

// goServe serves h with net/http and loads path.
func goServe(dur time.Duration, path string, h http.HandlerFunc) cpuLoad {
	return goServeWith(func(*http.Server) {}, dur, path, h)
}

// withTimeouts gives srv the read and idle timeouts http.serve has by
// default (a server open to the network needs them against slow
// clients; each request then sets the connection's deadlines).
func withTimeouts(srv *http.Server) {
	srv.ReadTimeout, srv.IdleTimeout = serve.DefaultReadTimeout, serve.DefaultIdleTimeout
}

// goServeWith is goServe with the server configured by config.
func goServeWith(config func(*http.Server), dur time.Duration, path string, h http.HandlerFunc) cpuLoad {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: h}
	config(srv)
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	putKey("http://" + addr + "/kv/key")
	return loadWithCPU("http://"+addr+path, dur)
}

func putKey(url string) {
	req, err := http.NewRequest("PUT", url, strings.NewReader("value-of-key"))
	check(err)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	resp.Body.Close()
}

// mapServer is the Go baseline of the key-value service.
type mapServer struct {
	mu   sync.Mutex
	data map[string]string
}

func newMapServer() *mapServer { return &mapServer{data: map[string]string{}} }

func (m *mapServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/kv/")
	if r.Method == "PUT" {
		b, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.data[key] = string(b)
		m.mu.Unlock()
		w.WriteHeader(204)
		return
	}
	m.mu.Lock()
	v, ok := m.data[key]
	m.mu.Unlock()
	if !ok {
		w.WriteHeader(404)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, v)
}

func wrkPath() string {
	p, _ := exec.LookPath("wrk")
	return p
}

// runLoad loads url for dur with wrk if installed, else goLoad.
func runLoad(url string, dur time.Duration) load {
	if p := wrkPath(); p != "" {
		return wrkLoad(p, url, dur)
	}
	return goLoad(url, dur, 50)
}

var (
	wrkRPS     = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkLatency = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$`)
)

func wrkLoad(path, url string, dur time.Duration) load {
	out, err := exec.Command(path, "-t1", "-c50", "--latency", "-d"+strconv.Itoa(int(dur.Seconds()))+"s", url).CombinedOutput()
	if err != nil {
		return load{errText: fmt.Sprintf("wrk: %v: %s", err, out)}
	}
	var l load
	if m := wrkRPS.FindSubmatch(out); m != nil {
		l.rps, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := wrkNon2xx.FindSubmatch(out); m != nil {
		l.non2xx, _ = strconv.Atoi(string(m[1]))
	}
	for _, m := range wrkLatency.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[2]), 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[string(m[3])]
		d := time.Duration(v * float64(unit))
		if string(m[1]) == "50" {
			l.p50 = d
		} else {
			l.p99 = d
		}
	}
	return l
}

// goLoad is the load generator without wrk: conns goroutines, each with
// its own keep-alive connection, requesting url in a loop for dur.
func goLoad(url string, dur time.Duration, conns int) load {
	var mu sync.Mutex
	var lats []time.Duration
	non2xx := 0
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(stop) {
				t0 := time.Now()
				resp, err := c.Get(url)
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					bad++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			non2xx += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lats)
	if len(lats) == 0 {
		return load{errText: "no responses"}
	}
	return load{rps: float64(len(lats)) / dur.Seconds(), p50: lats[len(lats)/2], p99: lats[len(lats)*99/100], non2xx: non2xx}
}

// nginxServe runs nginx with the Lua module (content_by_lua_block with
// the same hello) and loads it; errText says why not when it cannot.
func nginxServe(dur time.Duration) load {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		return load{errText: "nginx not installed"}
	}
	mod := "/usr/lib/nginx/modules/ndk_http_module.so"
	lua := "/usr/lib/nginx/modules/ngx_http_lua_module.so"
	if _, err := os.Stat(lua); err != nil {
		return load{errText: "nginx's Lua module not installed"}
	}
	dir, err := os.MkdirTemp("", "luarun-nginx")
	check(err)
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := ln.Addr().String()
	ln.Close()
	conf := fmt.Sprintf(`load_module %s;
load_module %s;
worker_processes auto;
daemon off;
pid %s/nginx.pid;
error_log %s/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %s;
  server {
    listen %s;
    location / {
      default_type 'text/plain; charset=utf-8';
      content_by_lua_block { ngx.print("hello " .. (ngx.var.arg_name or "world")) }
    }
  }
}
`, mod, lua, dir, dir, dir, addr)
	confPath := filepath.Join(dir, "nginx.conf")
	check(os.WriteFile(confPath, []byte(conf), 0o644))
	cmd := exec.Command(bin, "-c", confPath, "-p", dir)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return load{errText: "nginx: " + err.Error()}
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	go io.Copy(io.Discard, bufio.NewReader(stderr))
	for i := 0; ; i++ { // until it listens
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i > 200 {
			return load{errText: "nginx did not start"}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return runLoad("http://"+addr+"/?name=bench", dur)
}
