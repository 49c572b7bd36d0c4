package main

// The I/O workload of issue 7: many processes each making HTTP requests
// to a loopback server, against goroutines making the same requests with
// net/http. Both sides use a transport with the settings commands.NewIO
// gives luarun's (a clone of http.DefaultTransport keeping up to 1024 idle
// connections per host), so the comparison is of the runtimes, not of
// connection reuse.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"time"

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
		rt := luaproc.New(luaproc.Options{Workers: *workers, Allow: []string{"http"}, Logger: quietLogger(), Stdout: io.Discard})
		defer shutdown(rt)
		t0 := time.Now()
		runMain(rt, "fetch.lua", fetchLua, srv.URL, int64(procs), int64(n), int64(fetchBody))
		return time.Since(t0)
	}
	goRun := func() time.Duration {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost, t.MaxIdleConns = 1024, 1024 // as commands.NewIO
		defer t.CloseIdleConnections()
		client := &http.Client{Transport: t}
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
	// Alternate the two, three rounds each; report the medians, of wall
	// time and of the CPU time the whole process (server included) used.
	var lt, gt, lcpu, gcpu []time.Duration
	for range 3 {
		c0 := cpuTime()
		pprof.Do(context.Background(), pprof.Labels("side", "go"), func(context.Context) { gt = append(gt, goRun()) })
		c1 := cpuTime()
		pprof.Do(context.Background(), pprof.Labels("side", "luarun"), func(context.Context) { lt = append(lt, luarunRun()) })
		c2 := cpuTime()
		gcpu, lcpu = append(gcpu, c1-c0), append(lcpu, c2-c1)
	}
	l, g := median(lt), median(gt)
	reqs := float64(procs * n)
	perReq := func(d time.Duration) string { return fmtDur(d / time.Duration(procs*n)) }
	return []row{{
		workload: fmt.Sprintf("http: %d processes × %d http.get of %d B from a loopback server (median of 3)", procs, n, fetchBody),
		luarun:   fmt.Sprintf("%.0f req/s (%v; CPU %s/req)", reqs/l.Seconds(), l.Round(time.Millisecond), perReq(median(lcpu))),
		baseline: fmt.Sprintf("%.0f req/s (%v; CPU %s/req; %d goroutines, net/http)", reqs/g.Seconds(), g.Round(time.Millisecond), perReq(median(gcpu)), procs),
		floor:    "—",
		ratio:    fmt.Sprintf("luarun/Go %.2f×", g.Seconds()/l.Seconds()),
		target:   "≥ 0.8×",
	}}
}

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
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
