package main

// The I/O workload of issue 7: many processes each making HTTP requests
// to a loopback server, against goroutines making the same requests with
// net/http. Both sides use a transport with the settings commands.NewIO
// gives luarun's (a clone of http.DefaultTransport keeping up to 1024 idle
// connections per host), so the comparison is of the runtimes, not of
// connection reuse.
//
// luarun gives every request a deadline (30 s unless opts.timeout says
// otherwise), which costs a context and a timer per request. The Go
// baseline runs twice: as a plain client.Get, and with Client.Timeout set
// to the same 30 s, the way a Go service is told to use net/http; both
// ratios are reported.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/internal/cputime"
	"github.com/luarun/luarun/luaproc"
)

const fetchLua = `
function fetcher(url, n, size)
  for i = 1, n do
    local resp, err = http.get(url)
    if not resp then error(err) end
    if resp.status ~= 200 or #resp.body ~= size then error("bad response: " .. resp.status) end
  end
end
function main(url, procs, n, size)
  local pids = {}
  for i = 1, procs do pids[i] = process.spawn("fetcher", url, n, size) end
  for i = 1, procs do
    local ok, err = process.wait(pids[i])
    if not ok then error(err) end
  end
end`

const fetchBody = 1024

func fetch() []row {
	procs, n := size(1000, 200), 20
	body := make([]byte, fetchBody)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	defer srv.Close()

	luarunRun := func() time.Duration {
		rt, err := luaproc.New(luaproc.Options{Workers: *workers, Allow: []string{"http"}, Logger: quietLogger(), Stdout: io.Discard})
		check(err)
		defer shutdown(rt)
		t0 := time.Now()
		runMain(rt, "fetch.lua", fetchLua, srv.URL, int64(procs), int64(n), int64(fetchBody))
		return time.Since(t0)
	}
	goRun := func(timeout time.Duration) time.Duration {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost, t.MaxIdleConns = 1024, 1024 // as commands.NewIO
		defer t.CloseIdleConnections()
		client := &http.Client{Transport: t, Timeout: timeout}
		var wg sync.WaitGroup
		errs := make(chan error, procs)
		t0 := time.Now()
		for range procs {
			wg.Go(func() {
				for range n {
					if err := getOnce(client, srv.URL); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		check(<-errs)
		return time.Since(t0)
	}
	// The sides take turns, fetchRounds rounds, each round starting with
	// the next side (go, go-timeout, luarun; then go-timeout, luarun, go;
	// ...), and each side after a full collection, so that no side's
	// garbage is collected in another's time. Each side reports the
	// medians of its wall times and of the CPU time the whole process
	// (server included) used while it ran; a ratio is the median of the
	// rounds' own ratios (a round's sides ran seconds apart, so a change
	// in the host's load shifts all of them), with their range.
	const goPlain, goTimeout, luarun = 0, 1, 2
	sides := []struct {
		label string
		run   func() time.Duration
		wall  []time.Duration
		cpu   []time.Duration
	}{
		goPlain:   {label: "go", run: func() time.Duration { return goRun(0) }},
		goTimeout: {label: "go-timeout", run: func() time.Duration { return goRun(commands.DefaultHTTPTimeout) }},
		luarun:    {label: "luarun", run: luarunRun},
	}
	for round := range fetchRounds {
		for k := range sides {
			s := &sides[(round+k)%len(sides)]
			runtime.GC()
			c0 := cpuTime()
			pprof.Do(context.Background(), pprof.Labels("side", s.label), func(context.Context) { s.wall = append(s.wall, s.run()) })
			s.cpu = append(s.cpu, cpuTime()-c0)
		}
	}
	reqs := float64(procs * n)
	perReq := func(d time.Duration) string { return fmtDur(d / time.Duration(procs*n)) }
	describe := func(i int) string {
		w := median(sides[i].wall)
		return fmt.Sprintf("%.0f req/s (%v; CPU %s/req)", reqs/w.Seconds(), w.Round(time.Millisecond), perReq(median(sides[i].cpu)))
	}
	ratio := func(base int) string {
		rs := make([]float64, fetchRounds)
		for r := range rs {
			rs[r] = sides[base].wall[r].Seconds() / sides[luarun].wall[r].Seconds()
		}
		slices.Sort(rs)
		return fmt.Sprintf("luarun/Go %.2f× (rounds %.2f–%.2f)", rs[len(rs)/2], rs[0], rs[len(rs)-1])
	}
	workload := fmt.Sprintf("http: %d processes × %d http.get of %d B from a loopback server (%d rounds)", procs, n, fetchBody, fetchRounds)
	return []row{{
		workload: workload,
		luarun:   describe(luarun),
		baseline: describe(goPlain) + fmt.Sprintf("; %d goroutines, net/http, no deadline", procs),
		floor:    "—",
		ratio:    ratio(goPlain),
		target:   "≥ 0.8×",
	}, {
		workload: workload + ", beside Go with luarun's deadline per request",
		luarun:   describe(luarun),
		baseline: describe(goTimeout) + fmt.Sprintf("; the same with Client.Timeout = %v", commands.DefaultHTTPTimeout),
		floor:    "—",
		ratio:    ratio(goTimeout),
		target:   "≥ 0.8×",
	}}
}

// fetchRounds is how many times each side of the http workload runs.
const fetchRounds = 7

func getOnce(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || len(b) != fetchBody {
		return fmt.Errorf("bad response: %d, %d bytes", resp.StatusCode, len(b))
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	cpu, _ := cputime.Process()
	return cpu
}
