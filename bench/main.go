// Command bench is luarun's benchmark harness: it runs each workload on
// luarun and on its baselines in the same process and prints one table
// with the ratios (BENCHMARKS.md records its output).
//
//	go run ./bench            # full sizes (a few minutes)
//	go run ./bench -quick     # smaller sizes, for a smoke run
//
// Baselines: "A" is the straightforward Go design — one goroutine and one
// lua.NewState() per process, mailboxes as Go channels, recv/send as
// blocking Go functions; the "floor" is one bare gopher-lua coroutine
// resume/yield round trip, which nothing that resumes Lua can beat.
//
// It is a command, not a go test -bench set, because its point is the
// table: several workloads, each beside its baselines, with ratios.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/luarun/luarun/luaproc"
)

var (
	quick   = flag.Bool("quick", false, "smaller sizes")
	only    = flag.String("only", "", "run only workloads whose name contains one of these comma-separated words")
	workers = flag.Int("workers", 0, "scheduler workers for the workloads that do not set their own (0: GOMAXPROCS)")
	cpuProf = flag.String("cpuprofile", "", "write a CPU profile of the whole run (baselines included) to this file")
	memProf = flag.String("memprofile", "", "write an allocation profile of the whole run to this file")
)

// chosen reports whether -only selects the workload called name.
func chosen(name string) bool {
	if *only == "" {
		return true
	}
	for _, word := range strings.Split(*only, ",") {
		if word != "" && strings.Contains(name, word) {
			return true
		}
	}
	return false
}

type row struct {
	workload, luarun, baseline, floor, ratio, target string
}

func main() {
	flag.Parse()
	fmt.Printf("luarun benchmark harness — %s, %d CPUs, GOMAXPROCS %d, %s\n",
		runtime.Version(), runtime.NumCPU(), runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	if *memProf != "" {
		defer func() {
			f, err := os.Create(*memProf)
			check(err)
			check(pprof.Lookup("allocs").WriteTo(f, 0))
			check(f.Close())
		}()
	}
	var rows []row
	for _, w := range workloads() {
		if !chosen(w.name) {
			continue
		}
		// The harness's own resident set and the machine's available
		// memory: a row that runs a subprocess (million, flood) pays for
		// pages the kernel must first reclaim.
		fmt.Fprintf(os.Stderr, "running %s... (harness RSS %.0f MB, MemAvailable %.0f MB)\n", w.name, rssMB(), memAvailableMB())
		rows = append(rows, w.run()...)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "| workload\t| luarun\t| baseline A\t| floor\t| ratio\t| target\t|")
	fmt.Fprintln(tw, "|---\t|---\t|---\t|---\t|---\t|---\t|")
	for _, r := range rows {
		fmt.Fprintf(tw, "| %s\t| %s\t| %s\t| %s\t| %s\t| %s\t|\n", r.workload, r.luarun, r.baseline, r.floor, r.ratio, r.target)
	}
	tw.Flush()
}

type workload struct {
	name string
	run  func() []row
}

func workloads() []workload {
	return []workload{
		{"ring", ring},
		{"yield", yieldRoundTrip},
		{"spawn", spawn},
		{"fanout", fanOut},
		{"throughput", throughput},
		{"http", fetch},
		{"guards", guards},
		{"busy", behindBusy},
		{"flood", flood},
		{"failure", failure},
		{"stdlib", stdlib},
		{"logagg", logagg},
		{"vm", vmBench},
		{"erlang", erlang},
		{"million", million},
		{"cluster", clusterBench},
		{"scaling", scaling},
		{"serve http", serveBench},
		{"serve conns", serveConns},
		{"serve echo", serveEcho},
		{"embed", embedBench},
	}
}

func size(full, small int) int {
	if *quick {
		return small
	}
	return full
}

// newRuntime starts a runtime that prints nothing.
func newRuntime(workers int) *luaproc.Runtime {
	rt, err := luaproc.New(luaproc.Options{Workers: workers, Logger: quietLogger(), Stdout: io.Discard})
	check(err)
	return rt
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func shutdown(rt *luaproc.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
	}
}

// runMain runs entry main of src with args and returns its results.
func runMain(rt *luaproc.Runtime, name, src string, args ...any) []any {
	return runEntry(rt, name, src, "main", args...)
}

// runEntry runs entry of src with args and returns its results.
func runEntry(rt *luaproc.Runtime, name, src, entry string, args ...any) []any {
	s, err := rt.LoadString(name, src)
	check(err)
	return runLoaded(rt, s, entry, args...)
}

// runLoaded runs entry of the loaded script s with args and returns its
// results.
func runLoaded(rt *luaproc.Runtime, s *luaproc.Script, entry string, args ...any) []any {
	h, err := rt.Start(context.Background(), s, entry, args...)
	check(err)
	res, err := h.Wait(context.Background())
	check(err)
	return res
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
