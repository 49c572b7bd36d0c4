package main

// The log aggregation of scripts/logagg.lua: luarun parsing with 4 parser
// processes on one worker and on two (GOMAXPROCS set to match, so that
// the watchdog's helpers cannot add parallelism to the one-worker run),
// beside single-threaded lua5.4 running the same parse loop over the same
// file. Times are of the parsing only, as each program measures it.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
)

// logaggPlain runs scripts/lib/logparse.lua, logagg.lua's parse loop in
// plain Lua, over a file (run from the repository's root).
const logaggPlain = `
package.path = "scripts/?.lua;" .. package.path
local parse = require("lib.logparse")
local path = ...
local f = assert(io.open(path, "rb"))
local text = f:read("*a")
f:close()
local t0 = os.clock()
local _, _, lines = parse(text)
print(string.format("%d lines parsed in %.3f s", lines, os.clock() - t0))
`

var parsedIn = regexp.MustCompile(`(\d+) lines .*in ([0-9.]+) s`)

func logagg() []row {
	lines := size(2000000, 200000)
	dir, bin := luarunDir("luarun-logagg")
	defer os.RemoveAll(dir)
	plain := writeScript(dir, "plain.lua", logaggPlain)
	parse := func(cmd *exec.Cmd) (int, float64) {
		out, err := cmd.Output()
		check(err)
		m := parsedIn.FindStringSubmatch(string(out))
		if m == nil {
			check(fmt.Errorf("logagg: unexpected output %q", out))
		}
		n, _ := strconv.Atoi(m[1])
		secs, _ := strconv.ParseFloat(m[2], 64)
		return n, secs
	}
	luarunRun := func(workers int) func() (int, float64) {
		return func() (int, float64) {
			cmd := exec.Command(bin, "-w", strconv.Itoa(workers), "scripts/logagg.lua", strconv.Itoa(lines), "4", dir)
			cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(workers))
			return parse(cmd)
		}
	}
	median3 := func(run func() (int, float64)) (n int, secs float64) {
		secs = medianOf(3, func() float64 {
			var t float64
			n, t = run()
			return t
		})
		return n, secs
	}
	luarunRun(2)() // makes the log file
	n, w1 := median3(luarunRun(1))
	_, w2 := median3(luarunRun(2))
	logFile := filepath.Join(dir, fmt.Sprintf("access-%d.log", lines))
	fi, err := os.Stat(logFile)
	check(err)
	r := row{
		workload: fmt.Sprintf("log aggregation (scripts/logagg.lua): %d lines, %.0f MB, 4 parser processes, parse time (median of 3)", n, float64(fi.Size())/1e6),
		luarun:   fmt.Sprintf("-w 1: %.2f s; -w 2: %.2f s (%.2f× faster)", w1, w2, w1/w2),
		baseline: "lua5.4 missing", floor: "—",
		ratio:  "—",
		target: "-w 2 ≥ 1.7× -w 1; -w 2 no slower than lua5.4",
	}
	if lua54, err := exec.LookPath("lua5.4"); err == nil {
		_, l := median3(func() (int, float64) { return parse(exec.Command(lua54, plain, logFile)) })
		r.baseline = fmt.Sprintf("lua5.4, one thread, the same loop: %.2f s", l)
		r.ratio = fmt.Sprintf("-w 2 / lua5.4 %.2f×; -w 1 / lua5.4 %.2f×", w2/l, w1/l)
	}
	return []row{r}
}
