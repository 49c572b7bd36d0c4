package main

// The distance to Erlang: the figures that decide whether a process
// runtime carries a large program — a message hop in a ring of 1,000
// processes, a warm two-process ping-pong, spawn to the first blocking
// receive, and the memory of an idle process — for luarun, for Erlang/OTP
// (erl, when installed: apt-get install erlang-base) and for the floors a
// Lua runtime cannot beat, in one run.
//
// Erlang runs bench/anchor.erl (compiled here with erlc) in its own VM;
// luarun's time figures run in this process (a Runtime), its RSS figure
// in the luarun binary, as Erlang's does in erl: the resident set with N
// idle processes less the resident set with none, over N.

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/luarun/luarun/bench/idioms"
	"github.com/luarun/luarun/gcpace"
	lua "github.com/luarun/luarun/lua"
)

//go:embed anchor.erl
var anchorErl string

const pingpongLua = `
function pong()
  while true do
    local n, from = process.receive()
    process.send(from, n)
  end
end
function main(m)
  local peer = process.spawn("pong")
  local function rounds(k)
    for i = 1, k do process.send(peer, i); assert(process.receive() == i) end
  end
  rounds(1000) -- warm-up
  local t0 = time.monotonic()
  rounds(m)
  local dt = time.monotonic() - t0
  process.kill(peer)
  return dt
end`

// idleRSSLua starts n processes that wait in receive, waits until each
// has said so, and prints its resident set (VmRSS, KB).
const idleRSSLua = `
function idle(main) process.send(main, true); process.receive() end
function main(n)
  n = tonumber(n)
  local me = process.self()
  for i = 1, n do process.spawn("idle", me) end
  for i = 1, n do process.receive() end
  print((assert(fs.read("/proc/self/status")):match("VmRSS:%s*(%d+)")))
  os.exit(0)
end`

// messageRounds is how many times the message figures are taken, each
// round luarun's, the floor's and Erlang's one after the other: this
// machine's speed drifts within seconds, so each ratio is taken within a
// round and the median of the rounds' ratios is reported. Many short
// rounds, not a few long ones: a slow spell then spoils few ratios, and
// the two sides of a ratio are taken a fraction of a second apart.
const messageRounds = 15

// erlang is the anchor table: each figure for luarun, its floor, and
// Erlang.
func erlang() []row {
	n, m := size(1000, 200), size(300000, 30000)
	nSpawn := size(100000, 10000)
	erl := newErlAnchor()
	defer erl.close()

	ring, ping := messageFigures(erl, n, m)
	spawn := idleSpawns(nSpawn)
	heap := spawn.heap
	floorT, floorHeap := bareSpawnFloor(nSpawn, false)
	ownT, ownHeap := bareSpawnFloor(nSpawn, true)
	rss := luarunIdleRSS(nSpawn)

	rows := []row{
		{workload: fmt.Sprintf("ring: %d processes pass a token %d hops (per hop; median of %d rounds, each beside Erlang)", n, m, messageRounds),
			luarun: fmtDur(ring.luarun.median()), target: "≤ 2.0× Erlang"},
		{workload: fmt.Sprintf("ping-pong: two processes, %d round trips after 1,000 (per message; median of %d rounds, each beside the floor and Erlang)", m, messageRounds),
			luarun: fmtDur(ping.luarun.median()),
			floor:  fmtDur(ping.floor.median()) + " (two coroutines of one bare gopher-lua state resumed in turn by a Go loop)",
			target: "≤ 1.5× Erlang"},
		{workload: fmt.Sprintf("spawn to the first blocking receive, %d processes, median of 3 after a warm-up (each); the collector paced as the luarun command paces it (gcpace), and at Go's default pace", nSpawn),
			luarun: fmtDur(spawn.paced) + " paced; " + fmtDur(spawn.goPace) + " at Go's pace", floor: fmtDur(floorT) + " (a coroutine of one bare gopher-lua state run to its first yield); " +
				fmtDur(ownT) + " with globals of its own (the script's chunk run in a table of its own first)",
			target: "≤ 1.5× the floor (Go's pace, as the floor); ≤ 1.0× Erlang (paced)"},
		{workload: fmt.Sprintf("idle process: heap (HeapAlloc after GC) and resident set (VmRSS of the luarun binary, less with none) per process at %d", nSpawn),
			luarun: fmtBytes(heap) + " heap, " + fmtBytes(rss) + " RSS",
			floor:  fmtBytes(floorHeap) + " heap (the bare coroutine); " + fmtBytes(ownHeap) + " with globals of its own",
			target: "≤ 6 KB heap, ≤ 8 KB RSS"},
	}
	rows[1].ratio = ratioOf(ping.luarun, ping.floor) + " floor"
	rows[2].ratio = fmt.Sprintf("%.2f× floor (%.2f× with own globals)", float64(spawn.goPace)/float64(floorT), float64(spawn.goPace)/float64(ownT))
	if !erl.ok() {
		for i := range rows {
			rows[i].baseline = "erl missing (apt-get install erlang-base)"
		}
		return rows
	}
	erlSpawn, erlMem := erl.spawn(nSpawn)
	erlRSS := erl.idleRSS(nSpawn)
	rows[0].baseline, rows[0].ratio = "Erlang "+fmtDur(ring.erl.median()), ratioOf(ring.luarun, ring.erl)+" Erlang"
	rows[1].baseline = "Erlang " + fmtDur(ping.erl.median())
	rows[1].ratio = ratioOf(ping.luarun, ping.erl) + " Erlang; " + rows[1].ratio
	rows[2].baseline = "Erlang " + fmtDur(erlSpawn)
	rows[2].ratio += fmt.Sprintf("; %.2f× Erlang paced (%.2f× at Go's pace)", float64(spawn.paced)/float64(erlSpawn), float64(spawn.goPace)/float64(erlSpawn))
	rows[3].baseline = fmt.Sprintf("Erlang %s (erlang:memory(processes)), %s RSS", fmtBytes(erlMem), fmtBytes(erlRSS))
	rows[3].ratio = fmt.Sprintf("heap %.1f× Erlang's, RSS %.1f×", heap/erlMem, rss/erlRSS)
	return rows
}

// rounds holds one figure's time per round.
type rounds []time.Duration

func (r rounds) median() time.Duration { return median(r) }

// ratioOf is the median over the rounds of a[i]/b[i], with the lowest
// and highest: "1.42× (1.30–1.61×)".
func ratioOf(a, b rounds) string {
	ratios := make([]float64, len(a))
	for i := range a {
		ratios[i] = float64(a[i]) / float64(b[i])
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×)", medianF(ratios), slices.Min(ratios), slices.Max(ratios))
}

// messageFigure is a message figure's rounds: luarun's, its floor's (if
// it has one) and Erlang's (if erl is installed).
type messageFigure struct{ luarun, floor, erl rounds }

// messageFigures takes the ring and the ping-pong messageRounds times,
// each round luarun's figures, the floor's and Erlang's. Luarun's
// ping-pong and its floor swap places every other round, so that
// neither always runs second (after the other's garbage, in a warmed
// cache).
func messageFigures(erl *erlAnchor, n, m int) (ring, ping messageFigure) {
	rt := newRuntime(*workers)
	defer shutdown(rt)
	for i := range messageRounds {
		ring.luarun = append(ring.luarun, time.Duration(runMain(rt, "ring.lua", idioms.Ring, int64(n), int64(m))[0].(float64)*float64(time.Second)/float64(m)))
		pingLuarun := func() time.Duration {
			return time.Duration(runMain(rt, "pingpong.lua", pingpongLua, int64(m))[0].(float64) * float64(time.Second) / float64(2*m))
		}
		if i%2 == 0 {
			ping.luarun = append(ping.luarun, pingLuarun())
			ping.floor = append(ping.floor, barePingPong(m))
		} else {
			ping.floor = append(ping.floor, barePingPong(m))
			ping.luarun = append(ping.luarun, pingLuarun())
		}
		if erl.ok() {
			ring.erl = append(ring.erl, time.Duration(erl.once("ring", n, m)[0]))
			ping.erl = append(ping.erl, time.Duration(erl.once("pingpong", m)[0]))
		}
	}
	return ring, ping
}

// spawnFigure is the spawn row's luarun side: the time per spawn with the
// collector paced as the luarun command paces it (gcpace), and at Go's
// default pace (GOGC=100, where an application that embeds luarun and
// does not start gcpace runs), and the heap per idle process.
type spawnFigure struct {
	paced, goPace time.Duration
	heap          float64
}

// idleSpawns is the spawn row's measurement: n idle processes, a warm-up
// round, then the medians of 3 rounds (a fresh runtime each), each round
// under both paces, in turns. 100,000 idle processes are a heap that
// grows with what stays live, which is where the two paces differ most
// (gcpace's package comment).
func idleSpawns(n int) spawnFigure {
	var paced, goPace []time.Duration
	var heaps []float64
	once := func(pace bool) (time.Duration, float64) {
		if pace {
			defer gcpace.Start()()
		}
		rt := newRuntime(*workers)
		defer shutdown(rt)
		s, err := rt.LoadString("idle.lua", idleLua)
		check(err)
		return startIdle(rt, s, n)
	}
	for round := range 4 {
		var tPaced, tGo time.Duration
		var heap float64
		if round%2 == 0 { // which pace goes first alternates
			tPaced, heap = once(true)
			tGo, _ = once(false)
		} else {
			tGo, heap = once(false)
			tPaced, _ = once(true)
		}
		if round > 0 {
			goPace, paced, heaps = append(goPace, tGo), append(paced, tPaced), append(heaps, heap)
		}
	}
	return spawnFigure{paced: median(paced), goPace: median(goPace), heap: medianF(heaps)}
}

// bareSpawnFloor starts n coroutines of one bare gopher-lua state, each
// run to its first yield (a Go function that yields, as a blocking
// receive does), and returns the time and heap per coroutine: what
// spawning costs with nothing of luarun's. With ownGlobals, each first
// runs the script's chunk (function main ... end) in a globals table of
// its own whose __index is the shared globals, then calls its main: the
// least a process that cannot see another's globals needs.
func bareSpawnFloor(n int, ownGlobals bool) (time.Duration, float64) {
	// The stack sizes luarun's coroutines start with (16 values, a frame
	// stack that grows): gopher-lua's defaults (5,120 values, 256 frames)
	// would make each ~100 KB.
	L := lua.NewState(lua.Options{RegistrySize: 128, RegistryMaxSize: 1 << 20, RegistryGrowStep: 128,
		CallStackSize: 20000, MinimizeStackMemory: true})
	defer L.Close()
	L.Options.RegistrySize = 16 // for the threads (NewState takes no less than 128)
	L.SetGlobal("receive", L.NewFunction(func(L *lua.LState) int { return L.Yield() }))
	const chunk = `function idle() receive() end`
	check(L.DoString(chunk))
	idle := L.GetGlobal("idle").(*lua.LFunction)
	proto, err := L.LoadString(chunk)
	check(err)
	sharedMT := L.CreateTable(0, 1)
	sharedMT.RawSetString("__index", L.G.Global)
	start := func(co *lua.LState) *lua.LFunction {
		if !ownGlobals {
			return idle
		}
		g := L.CreateTable(0, 2)
		g.Metatable = sharedMT
		fn := L.NewFunctionFromProto(proto.Proto)
		fn.Env = g
		co.Env = g
		co.Push(fn)
		check(co.PCall(0, 0, nil))
		return g.RawGetString("idle").(*lua.LFunction)
	}
	var ts []time.Duration
	var heaps []float64
	for round := range 4 {
		cos := make([]*lua.LState, n)
		before := heapAfterGC()
		t0 := time.Now()
		for i := range cos {
			cos[i], _ = L.NewThread()
			if st, err, _ := L.Resume(cos[i], start(cos[i])); st != lua.ResumeYield || err != nil {
				check(fmt.Errorf("bare coroutine: status %v, %v", st, err))
			}
		}
		t := time.Since(t0) / time.Duration(n)
		heap := float64(heapAfterGC()-before) / float64(n)
		if round > 0 {
			ts, heaps = append(ts, t), append(heaps, heap)
		}
		clear(cos)
	}
	return median(ts), medianF(heaps)
}

// barePingPong is the message floor: two coroutines of one bare
// gopher-lua state pass a number back and forth m times, send storing it
// in a Go variable and receive yielding, resumed in turn by a Go loop —
// the Lua side of a message with no scheduler, mailbox or isolation. It
// returns the time per message.
func barePingPong(m int) time.Duration {
	L := lua.NewState()
	defer L.Close()
	var slot lua.LValue
	L.SetGlobal("send", L.NewFunction(func(L *lua.LState) int { slot = L.Get(1); return 0 }))
	L.SetGlobal("receive", L.NewFunction(func(L *lua.LState) int { return L.Yield() }))
	check(L.DoString(`
process = {send = send, receive = receive}
function ping(n) for i = 1, n do process.send(i); assert(process.receive() == i) end end
function pong() while true do process.send(process.receive()) end end`))
	ponger, _ := L.NewThread()
	ping, pong := L.GetGlobal("ping").(*lua.LFunction), L.GetGlobal("pong").(*lua.LFunction)
	_, err, _ := L.Resume(ponger, pong) // waits in receive
	check(err)
	round := func(st lua.ResumeState, err error, _ []lua.LValue) (lua.ResumeState, error) { return st, err }
	play := func(k int) {
		pinger, _ := L.NewThread()
		st, err := round(L.Resume(pinger, ping, lua.LNumber(k)))
		for st == lua.ResumeYield && err == nil {
			_, err, _ = L.Resume(ponger, nil, slot) // ponger sends it back
			check(err)
			st, err = round(L.Resume(pinger, nil, slot))
		}
		check(err)
	}
	play(1000) // warm-up
	t0 := time.Now()
	play(m)
	return time.Since(t0) / time.Duration(2*m)
}

// luarunIdleRSS is the luarun binary's resident set with n idle processes
// less its resident set with none, over n (median of 3 each).
func luarunIdleRSS(n int) float64 {
	dir, bin := luarunDir("luarun-rss")
	defer os.RemoveAll(dir)
	script := writeScript(dir, "idle.lua", idleRSSLua)
	rss := func(k int) float64 {
		return medianOf(3, func() float64 { return printedRSS(exec.Command(bin, script, strconv.Itoa(k))) })
	}
	return (rss(n) - rss(0)) / float64(n)
}

// printedRSS runs cmd, which prints its VmRSS in KB (the rusage of a
// child would not do: on Linux its peak starts at the parent's), and
// returns it in bytes.
func printedRSS(cmd *exec.Cmd) float64 {
	cmd.Stderr = io.Discard // the watchdog's notes of long steps
	out, err := cmd.Output()
	check(err)
	kb, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	check(err)
	return kb * 1024
}

// erlAnchor runs anchor.erl's figures in erl.
type erlAnchor struct {
	dir string // where anchor.beam is; "" when erl or erlc is missing
}

func newErlAnchor() *erlAnchor {
	a := &erlAnchor{}
	if _, err := exec.LookPath("erl"); err != nil {
		fmt.Fprintln(os.Stderr, "erlang: erl is not installed (apt-get install erlang-base): its column is empty")
		return a
	}
	dir, err := os.MkdirTemp("", "luarun-erl")
	check(err)
	check(os.WriteFile(filepath.Join(dir, "anchor.erl"), []byte(anchorErl), 0o644))
	erlc := exec.Command("erlc", "anchor.erl")
	erlc.Dir, erlc.Stderr = dir, os.Stderr
	check(erlc.Run())
	a.dir = dir
	return a
}

func (a *erlAnchor) ok() bool { return a.dir != "" }

func (a *erlAnchor) close() {
	if a.dir != "" {
		os.RemoveAll(a.dir)
	}
}

// command is erl running anchor:main with kind and args.
func (a *erlAnchor) command(kind string, args ...int) *exec.Cmd {
	argv := []string{"-noshell", "-pa", a.dir, "-run", "anchor", "main", kind}
	if kind == "million" { // more than the default limit of 262,144 processes
		argv = append([]string{"+P", "2000000"}, argv...)
	}
	for _, x := range args {
		argv = append(argv, strconv.Itoa(x))
	}
	return exec.Command("erl", argv...)
}

// once runs kind and returns the numbers it printed.
func (a *erlAnchor) once(kind string, args ...int) []float64 {
	out, err := a.command(kind, args...).Output()
	check(err)
	var xs []float64
	for _, f := range strings.Fields(strings.Trim(strings.TrimSpace(string(out)), "{}")) {
		for _, p := range strings.Split(f, ",") {
			if p == "" {
				continue
			}
			x, err := strconv.ParseFloat(p, 64)
			check(err)
			xs = append(xs, x)
		}
	}
	return xs
}

// run runs kind and returns the numbers it printed, median of 3 runs
// (each number on its own).
func (a *erlAnchor) run(kind string, args ...int) []float64 {
	var runs [][]float64
	for range 3 {
		runs = append(runs, a.once(kind, args...))
	}
	med := make([]float64, len(runs[0]))
	for i := range med {
		col := make([]float64, len(runs))
		for j, r := range runs {
			col[j] = r[i]
		}
		med[i] = medianF(col)
	}
	return med
}

// spawn is Erlang's time per spawn and bytes per idle process.
func (a *erlAnchor) spawn(n int) (time.Duration, float64) {
	r := a.run("spawn", n)
	return time.Duration(r[0]), r[1]
}

// idleRSS is erl's resident set with n idle processes less with none,
// over n.
func (a *erlAnchor) idleRSS(n int) float64 {
	rss := func(k int) float64 {
		return medianOf(3, func() float64 { return printedRSS(a.command("idle", k)) })
	}
	return (rss(n) - rss(0)) / float64(n)
}
