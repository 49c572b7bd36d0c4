package main

// The embedding workload of issue 30: one HTTP service, served by Go's
// net/http three ways in the same run and loaded by the same generator
// (serve.go's runLoad: wrk -t1 -c50, else a Go generator of that shape):
//
//   - luarun: each request runs a Lua process with the request's
//     context on the request's goroutine (rt.Call(r.Context(), script,
//     "handle", method, key)); the handler calls db.get(key), a Go
//     command the application registered, which a goroutine answers (a
//     map lookup behind a mutex, completed from that goroutine), and
//     returns the status and the body;
//   - start: the same with rt.Start and Handle.Wait (the process runs
//     on the workers; the request's goroutine waits);
//   - luarun-sync: luarun with db.get answered in its handler, on the
//     process's goroutine (the pool's work, without the hand-off);
//   - pool: how gopher-lua is embedded today — a channel of *lua.LState
//     (our lua package), each with the script loaded once and db.get a
//     direct LGFunction doing the same lookup on the request's goroutine;
//     a request takes a state, calls handle, puts it back; and the same
//     with a sync.Pool and the request's context set on the state;
//   - Go: a net/http handler doing the same lookup and writing the same
//     body.
//
// The variants run in turn, rounds times (interleaved, so a busy host
// slows them alike); each column is the median round by requests/s, and
// each ratio the median of the rounds' ratios (with the CPU time per
// request, which depends less on the host's other load).

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/luaproc"
)

// embedLua is the handler every Lua variant runs.
const embedLua = `
function handle(method, key)
  local v = db.get(key)
  if v == nil then return 404, "no item " .. key .. "\n" end
  return 200, string.format("%s %s: %s\n", method, key, v)
end`

// embedDB is the application's data: a map behind a mutex.
type embedDB struct {
	mu   sync.Mutex
	data map[string]string
}

func newEmbedDB() *embedDB {
	db := &embedDB{data: map[string]string{}}
	for i := range 100 {
		db.data["k"+strconv.Itoa(i)] = "value-" + strconv.Itoa(i)
	}
	return db
}

func (db *embedDB) get(key string) (string, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	v, ok := db.data[key]
	return v, ok
}

const embedPath = "/item?key=k42"

var embedOnly = flag.String("embed", "luarun,pool,syncpool,go,start,luarun-sync", "the embed workload's variants to run (for profiling one)")

func embedBench() []row {
	dur := time.Duration(size(3, 2)) * time.Second
	rounds := size(5, 1)
	gen := "go generator, 50 connections"
	if wrkPath() != "" {
		gen = "wrk -t1 -c50"
	}
	fmt.Fprintf(os.Stderr, "embed: load generator %s, %v per run, %d rounds\n", gen, dur, rounds)
	db := newEmbedDB()
	variants := []struct {
		name    string
		handler func(db *embedDB) (http.Handler, func())
	}{
		{"luarun", luarunEmbedHandler},
		{"pool", poolEmbedHandler},
		{"syncpool", syncPoolEmbedHandler},
		{"go", goEmbedHandler},
		{"start", startEmbedHandler},
		{"luarun-sync", luarunSyncEmbedHandler},
	}
	results := make([][]cpuLoad, len(variants))
	for r := range rounds {
		for i, v := range variants {
			if !slices.Contains(strings.Split(*embedOnly, ","), v.name) {
				results[i] = append(results[i], cpuLoad{load: load{errText: "not run (-embed)"}})
				continue
			}
			h, stop := v.handler(db)
			l := serveLoad(h, dur)
			stop()
			fmt.Fprintf(os.Stderr, "embed: round %d %s: %s\n", r+1, v.name, l)
			results[i] = append(results[i], l)
		}
	}
	lr, pr, sr, gr, str, syr := medianLoad(results[0]), medianLoad(results[1]), medianLoad(results[2]),
		medianLoad(results[3]), medianLoad(results[4]), medianLoad(results[5])
	return []row{
		{
			workload: fmt.Sprintf("embed: process per request vs LState pool (%s, median of %d)", gen, rounds),
			luarun:   lr.String(), baseline: "pool: " + pr.String(),
			ratio: roundRatios(results[0], results[1]), target: ">= 1.0x the pool",
		},
		{
			workload: "embed: vs a sync.Pool of LStates with the request's context",
			luarun:   lr.String(), baseline: "sync.Pool: " + sr.String(),
			ratio: roundRatios(results[0], results[2]), target: "-",
		},
		{
			workload: "embed: process per request vs plain Go",
			luarun:   lr.String(), baseline: "Go: " + gr.String(),
			ratio: roundRatios(results[0], results[3]), target: "-",
		},
		{
			workload: "embed: Start+Wait per request (on the workers) vs LState pool",
			luarun:   str.String(), baseline: "pool: " + pr.String(),
			ratio: roundRatios(results[4], results[1]), target: "-",
		},
		{
			workload: "embed: process per request, db.get answered in its handler (the pool's work) vs LState pool",
			luarun:   syr.String(), baseline: "pool: " + pr.String(),
			ratio: roundRatios(results[5], results[1]), target: "-",
		},
	}
}

// roundRatios compares a with b round by round (the two ran next to
// each other, so a busy host slowed them alike): the median of the
// rounds' requests/s ratios, each round's, and the ratio of CPU time per
// request (less sensitive to the host's load) when both ran in this
// process; "-" when either did not run.
func roundRatios(a, b []cpuLoad) string {
	var rps, cpu []float64
	for i := range a {
		if a[i].rps == 0 || b[i].rps == 0 {
			return "-"
		}
		rps = append(rps, a[i].rps/b[i].rps)
		cpu = append(cpu, float64(a[i].cpu)/float64(b[i].cpu))
	}
	s := fmt.Sprintf("%.2fx", medianF(rps))
	if len(rps) > 1 {
		parts := make([]string, len(rps))
		for i, r := range rps {
			parts[i] = fmt.Sprintf("%.2f", r)
		}
		s += " (rounds " + strings.Join(parts, ", ") + ")"
	}
	if slices.Contains(cpu, 0) || slices.ContainsFunc(cpu, func(r float64) bool { return math.IsInf(r, 0) || math.IsNaN(r) }) {
		return s // one of them ran in another process (nginx): its CPU is not counted
	}
	return s + fmt.Sprintf("; CPU/req %.2fx", medianF(cpu))
}

// cpuLoad is a load run with the CPU time this process spent on each
// request (the server's, not the generator's: on a busy host requests/s
// depends on the share of the CPUs the server gets, this much less).
type cpuLoad struct {
	load
	cpu time.Duration
}

func (l cpuLoad) String() string {
	if l.errText != "" || l.rps == 0 || l.cpu == 0 {
		return l.load.String() // no CPU time: it ran in another process
	}
	return fmt.Sprintf("%s, %s CPU/req", l.load, fmtDur(l.cpu))
}

// medianLoad is the run with the median requests/s.
func medianLoad(ls []cpuLoad) cpuLoad {
	s := slices.Clone(ls)
	slices.SortFunc(s, func(a, b cpuLoad) int { return cmp.Compare(a.rps, b.rps) })
	return s[len(s)/2]
}

// serveLoad serves h with net/http on a loopback port and loads embedPath
// for dur, after one request that must answer 200.
func serveLoad(h http.Handler, dur time.Duration) cpuLoad {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + embedPath
	resp, err := http.Get(url)
	check(err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "GET k42: value-42\n" {
		check(fmt.Errorf("embed: %s answered %d %q", url, resp.StatusCode, body))
	}
	return loadWithCPU(url, dur)
}

// luarunEmbedHandler runs a process of embedLua per request, on the
// request's goroutine (Runtime.Call).
func luarunEmbedHandler(db *embedDB) (http.Handler, func()) {
	return callHandler(embedRuntime(db))
}

// callHandler answers each request with a Call of s's handle in rt.
func callHandler(rt *luaproc.Runtime, s *luaproc.Script) (http.Handler, func()) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := rt.Call(r.Context(), s, "handle", r.Method, r.URL.Query().Get("key"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeLuaResult(w, res)
	})
	return h, func() { shutdown(rt) }
}

// startEmbedHandler starts a process of embedLua per request on the
// workers (Runtime.Start) and waits for it.
func startEmbedHandler(db *embedDB) (http.Handler, func()) {
	rt, s := embedRuntime(db)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := rt.Start(r.Context(), s, "handle", r.Method, r.URL.Query().Get("key"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		res, err := p.Wait(r.Context())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		writeLuaResult(w, res)
	})
	return h, func() { shutdown(rt) }
}

// luarunSyncEmbedHandler is luarunEmbedHandler with db.get answered in
// its handler, on the process's goroutine, as the pool's LGFunction
// answers it: the same work as the pool, without a goroutine's hand-off.
func luarunSyncEmbedHandler(db *embedDB) (http.Handler, func()) {
	return callHandler(embedRuntimeWith(db, func(answer func()) { answer() }))
}

// embedRuntime is a runtime with db.get registered (answered from a
// goroutine) and embedLua loaded.
func embedRuntime(db *embedDB) (*luaproc.Runtime, *luaproc.Script) {
	return embedRuntimeWith(db, func(answer func()) { go answer() })
}

// embedRuntimeWith is embedRuntime with db.get's answer run by run.
func embedRuntimeWith(db *embedDB, run func(answer func())) (*luaproc.Runtime, *luaproc.Script) {
	rt := newRuntime(*workers)
	check(rt.Register("db.get", func(c luaproc.Call) error {
		key, _ := c.Args[0].(string)
		run(func() {
			if v, ok := db.get(key); ok {
				c.Complete(v)
			} else {
				c.Complete(nil)
			}
		})
		return nil
	}))
	s, err := rt.LoadString("handler.lua", embedLua)
	check(err)
	return rt, s
}

// writeLuaResult writes a handler's (status, body).
func writeLuaResult(w http.ResponseWriter, res []any) {
	status, _ := res[0].(int64)
	body, _ := res[1].(string)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(int(status))
	io.WriteString(w, body)
}

// poolEmbedHandler runs embedLua on a pool of LStates, one per request
// at a time, as gopher-lua is embedded without luarun.
func poolEmbedHandler(db *embedDB) (http.Handler, func()) {
	pool := make(chan *lua.LState, 64)
	for range cap(pool) {
		pool <- newPoolState(db)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		L := <-pool
		defer func() { pool <- L }()
		serveFromState(L, w, r)
	})
	return h, func() {
		for range cap(pool) {
			(<-pool).Close()
		}
	}
}

// serveFromState answers r with embedLua's handle run in L, as the pool
// variants do.
func serveFromState(L *lua.LState, w http.ResponseWriter, r *http.Request) {
	err := L.CallByParam(lua.P{Fn: L.GetGlobal("handle"), NRet: 2, Protect: true},
		lua.LString(r.Method), lua.LString(r.URL.Query().Get("key")))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	status, body := L.Get(-2), L.Get(-1)
	L.Pop(2)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(int(lua.LVAsNumber(status)))
	io.WriteString(w, lua.LVAsString(body))
}

// syncPoolEmbedHandler is poolEmbedHandler with a sync.Pool (which drops
// its states at collections: the next requests make new ones) and the
// request's context set on the state for the call, so that a client that
// goes away stops the Lua code — as gopher-lua's README suggests, and as
// luarun's process gets the request's context.
func syncPoolEmbedHandler(db *embedDB) (http.Handler, func()) {
	pool := sync.Pool{New: func() any { return newPoolState(db) }}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		L := pool.Get().(*lua.LState)
		defer pool.Put(L)
		L.SetContext(r.Context())
		defer L.RemoveContext()
		serveFromState(L, w, r)
	})
	return h, func() {}
}

// newPoolState is one pooled state: embedLua loaded, db.get registered.
func newPoolState(db *embedDB) *lua.LState {
	L := lua.NewState()
	dbt := L.NewTable()
	L.SetField(dbt, "get", L.NewFunction(func(L *lua.LState) int {
		if v, ok := db.get(L.CheckString(1)); ok {
			L.Push(lua.LString(v))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}))
	L.SetGlobal("db", dbt)
	check(L.DoString(embedLua))
	return L
}

// goEmbedHandler is the same service in plain Go.
func goEmbedHandler(db *embedDB) (http.Handler, func()) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Query().Get("key")
		v, ok := db.get(key)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ok {
			w.WriteHeader(404)
			io.WriteString(w, "no item "+key+"\n")
			return
		}
		fmt.Fprintf(w, "%s %s: %s\n", r.Method, key, v)
	})
	return h, func() {}
}
