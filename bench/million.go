package main

// A million processes beside Erlang (issue 32): N processes started, each
// waiting in receive, then messaged once and heard back from, at N and
// at N/10, in the luarun binary and in erl (anchor.erl's million kind),
// one after the other. Each side reports its wall time per phase, its
// CPU time per phase (user + system of the whole OS process, from
// /proc/self/stat, so that a loaded machine moves it less than the wall
// time) and its peak resident set (VmHWM). The spawn cost growth is the
// cost per process at N over the cost at N/10.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// millionLua is bench/million.lua printing its figures in one line:
// start wall s, start CPU s, message wall s, message CPU s, VmHWM KB.
// Its chunk, as bench/million.lua's, only defines global functions, so
// no process runs it (luaproc/scriptglobals.go): cpu is a global for
// that. (A top-level local, even a local function, makes every process
// run the chunk: 4.5-5.8 s instead of 3.6-3.8 s for the million, on the
// 2-core machine of BENCHMARKS.md.)
const millionLua = `
function cpu() -- user + system seconds of the OS process
  local f = {}
  for x in fs.read("/proc/self/stat"):match("%) (.*)"):gmatch("%S+") do f[#f + 1] = x end
  return (tonumber(f[12]) + tonumber(f[13])) / 100
end
function idle(main)
  process.send(main, true)
  process.send(main, (process.receive()))
end
function main(n)
  n = tonumber(n)
  local me, pids = process.self(), {}
  local t0, c0 = time.monotonic(), cpu()
  for i = 1, n do pids[i] = process.spawn("idle", me) end
  for i = 1, n do process.receive() end
  local t1, c1 = time.monotonic(), cpu()
  for i = 1, n do process.send(pids[i], "hello") end
  for i = 1, n do assert(process.receive() == "hello") end
  local t2, c2 = time.monotonic(), cpu()
  local hwm = fs.read("/proc/self/status"):match("VmHWM:%s*(%d+)")
  print(t1 - t0, c1 - c0, t2 - t1, c2 - c1, hwm)
  os.exit(0)
end`

// millionRun is one run's figures.
type millionRun struct {
	start, startCPU, msg, msgCPU time.Duration
	peak                         float64 // bytes
}

func millionRunOf(xs []float64, unit float64) millionRun {
	if len(xs) != 5 {
		check(fmt.Errorf("million: want 5 figures, got %v", xs))
	}
	d := func(x float64) time.Duration { return time.Duration(x * unit) }
	return millionRun{start: d(xs[0]), startCPU: d(xs[1]), msg: d(xs[2]), msgCPU: d(xs[3]), peak: xs[4] * 1024}
}

func million() []row {
	n := size(1000000, 100000)
	dir, bin := luarunDir("luarun-million")
	defer os.RemoveAll(dir)
	script := writeScript(dir, "million.lua", millionLua)
	erl := newErlAnchor()
	defer erl.close()
	var rows []row
	var lr, er [2]millionRun
	for i, k := range []int{n / 10, n} {
		lr[i] = luarunMillion(bin, script, k)
		if erl.ok() {
			er[i] = millionRunOf(erl.once("million", k), 1) // ns, ns, ns, ns, KB
		}
		rows = append(rows, millionRows(k, lr[i], er[i], erl.ok())...)
	}
	per := func(r millionRun, k int) (float64, float64) {
		return float64(r.start) / float64(k), float64(r.startCPU) / float64(k)
	}
	growth := func(rs [2]millionRun) string {
		w0, c0 := per(rs[0], n/10)
		w1, c1 := per(rs[1], n)
		return fmt.Sprintf("wall %.2f×, CPU %.2f×", w1/w0, c1/c0)
	}
	g := row{workload: fmt.Sprintf("spawn cost per process at %d over at %d", n, n/10), luarun: growth(lr), target: "≤ 1.3×"}
	if erl.ok() {
		g.baseline = "Erlang " + growth(er)
	}
	return append(rows, g)
}

// luarunMillion runs the million script with k processes.
func luarunMillion(bin, script string, k int) millionRun {
	cmd := exec.Command(bin, script, strconv.Itoa(k))
	cmd.Stderr = nil // the watchdog's notes of long steps
	out, err := cmd.Output()
	check(err)
	var xs []float64
	for _, f := range strings.Fields(string(out)) {
		x, err := strconv.ParseFloat(f, 64)
		check(err)
		xs = append(xs, x)
	}
	return millionRunOf(xs, float64(time.Second))
}

// millionRows are the rows of one size: started, messaged, peak RSS.
func millionRows(k int, l, e millionRun, erlOK bool) []row {
	each := func(d time.Duration) string { return fmtDur(d / time.Duration(k)) }
	rows := []row{
		{workload: fmt.Sprintf("%d processes started, each until it waits in receive (wall; CPU)", k),
			luarun: fmt.Sprintf("%s (%s each); CPU %s (%s each)", fmtDur(l.start), each(l.start), fmtDur(l.startCPU), each(l.startCPU)),
			target: "≤ 1.5× Erlang (started and messaged)"},
		{workload: fmt.Sprintf("%d processes each messaged once and heard back from (wall; CPU)", k),
			luarun: fmt.Sprintf("%s; CPU %s", fmtDur(l.msg), fmtDur(l.msgCPU)),
			target: "≤ 1.5× Erlang (started and messaged)"},
		{workload: fmt.Sprintf("%d processes: peak resident set (VmHWM)", k),
			luarun: fmt.Sprintf("%.2f GB", l.peak/1e9), target: "≤ 1.5× Erlang"},
	}
	if !erlOK {
		return rows
	}
	rows[0].baseline = fmt.Sprintf("Erlang %s (%s each); CPU %s", fmtDur(e.start), each(e.start), fmtDur(e.startCPU))
	rows[0].ratio = fmt.Sprintf("wall %.2f×, CPU %.2f× (started and messaged: wall %.2f×)",
		float64(l.start)/float64(e.start), float64(l.startCPU)/float64(e.startCPU), float64(l.start+l.msg)/float64(e.start+e.msg))
	rows[1].baseline = fmt.Sprintf("Erlang %s; CPU %s", fmtDur(e.msg), fmtDur(e.msgCPU))
	rows[1].ratio = fmt.Sprintf("wall %.2f×, CPU %.2f×", float64(l.msg)/float64(e.msg), float64(l.msgCPU)/float64(e.msgCPU))
	rows[2].baseline = fmt.Sprintf("Erlang %.2f GB", e.peak/1e9)
	rows[2].ratio = fmt.Sprintf("%.2f×", l.peak/e.peak)
	return rows
}
