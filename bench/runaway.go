package main

// Workloads of the runaway-process guards: what the watchdog and the
// mailbox counting cost the ring and the message stream, the delay a
// process sees behind a busy one, and a flood of sends with and without
// a mailbox limit.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/luarun/luarun/bench/idioms"
	"github.com/luarun/luarun/luaproc"
)

// unguarded is a runtime without the watchdog and without mailbox
// counting: the same run as the default one, less what is measured.
func unguarded(workers int) *luaproc.Runtime {
	rt, err := luaproc.New(luaproc.Options{Workers: workers, Logger: quietLogger(), Stdout: discard{},
		NoWatchdog: true, MaxMailbox: -1})
	check(err)
	return rt
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// guards runs the ring and the message stream on a default runtime and
// on an unguarded one, alternating, 5 rounds each, and reports the
// medians and the median of the rounds' own ratios.
func guards() []row {
	const rounds = 5
	n, m := 1000, size(300000, 30000)
	msgs := size(1000000, 100000)
	ring := onOff(rounds, func(rt *luaproc.Runtime) time.Duration {
		res := runMain(rt, "ring.lua", idioms.Ring, int64(n), int64(m))
		return time.Duration(res[0].(float64) * float64(time.Second) / float64(m))
	})
	stream := onOff(rounds, func(rt *luaproc.Runtime) time.Duration {
		res := runMain(rt, "stream.lua", streamLua, int64(msgs))
		return time.Duration(res[0].(float64) * float64(time.Second) / float64(msgs))
	})
	return []row{
		{
			workload: fmt.Sprintf("guards: ring of %d, %d hops, watchdog and mailbox counting on vs off (per hop, medians of %d)", n, m, rounds),
			luarun:   fmtDur(ring.median("on")), baseline: fmtDur(ring.median("off")) + " (off)", floor: "—",
			ratio:  "on/off " + ring.ratio("on", "off"),
			target: "nothing measurable",
		},
		{
			workload: fmt.Sprintf("guards: 2 processes stream %d messages, on vs off (per message, medians of %d)", msgs, rounds),
			luarun:   fmtDur(stream.median("on")), baseline: fmtDur(stream.median("off")) + " (off)", floor: "—",
			ratio:  "on/off " + stream.ratio("on", "off"),
			target: "nothing measurable",
		},
	}
}

// onOff runs work on a default runtime ("on") and on an unguarded one
// ("off"), each round starting with the other side (alternate).
func onOff(rounds int, work func(*luaproc.Runtime) time.Duration) sides {
	return alternate(rounds, func(side string) time.Duration {
		var rt *luaproc.Runtime
		if side == "on" {
			rt = newRuntime(*workers)
		} else {
			rt = unguarded(*workers)
		}
		defer shutdown(rt)
		return work(rt)
	}, "on", "off")
}

const behindBusyLua = `
function spin() local n = 0 while true do n = n + 1 end end
function main(busy, sleeps)
  local pid
  if busy then pid = process.spawn("spin"); time.sleep(0.05) end
  local late = {}
  for i = 1, sleeps do
    local t0 = time.monotonic()
    time.sleep(0.001)
    late[i] = time.monotonic() - t0 - 0.001
  end
  if pid then process.kill(pid) end
  table.sort(late)
  return late[math.floor(#late / 2) + 1], late[math.floor(#late * 0.99)], late[#late]
end`

// behindBusy measures how late a process that sleeps 1 ms at a time
// wakes up with one worker, beside a process in an endless loop, and
// without one.
func behindBusy() []row {
	sleeps := size(300, 100)
	measure := func(busy bool) (p50, p99, worst time.Duration) {
		rt, err := luaproc.New(luaproc.Options{Workers: 1, Logger: quietLogger(), Stdout: discard{}})
		check(err)
		res := runMain(rt, "busy.lua", behindBusyLua, busy, int64(sleeps))
		shutdown(rt)
		d := func(v any) time.Duration { return time.Duration(v.(float64) * float64(time.Second)) }
		return d(res[0]), d(res[1]), d(res[2])
	}
	b50, b99, bmax := measure(true)
	q50, q99, qmax := measure(false)
	return []row{{
		workload: fmt.Sprintf("behind a busy process: -w 1, %d sleeps of 1 ms beside an endless loop, lateness p50 / p99 / max", sleeps),
		luarun:   fmt.Sprintf("%s / %s / %s", fmtDur(b50), fmtDur(b99), fmtDur(bmax)),
		baseline: fmt.Sprintf("no loop: %s / %s / %s", fmtDur(q50), fmtDur(q99), fmtDur(qmax)),
		floor:    "—", ratio: "—",
		target: "runs at all (the watchdog's slice is 10 ms)",
	}}
}

const floodLua = `
function deaf() time.sleep(math.huge) end
function main(n)
  local pid = process.spawn("deaf")
  local t0 = time.monotonic()
  local refused = 0
  for i = 1, tonumber(n) do
    if not process.send(pid, i) then refused = refused + 1 end
  end
  print(time.monotonic() - t0, refused)
  os.exit(0)
end`

// flood runs luarun (built here) sending 10 million messages to a process
// that never receives them, with --max-mailbox 1000 and without a limit,
// and reports the time of the sends and the peak RSS; beside it, a
// goroutine making as many non-blocking sends to a channel of 1,000.
func flood() []row {
	n := size(10000000, 1000000)
	dir, bin := luarunDir("luarun-flood")
	defer os.RemoveAll(dir)
	script := writeScript(dir, "flood.lua", floodLua)
	run := func(args ...string) (secs float64, refused int64, rssKB int64) {
		cmd := exec.Command(bin, append(args, script, fmt.Sprint(n))...)
		out, err := cmd.Output()
		check(err)
		_, err = fmt.Sscan(string(out), &secs, &refused)
		check(err)
		return secs, refused, int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // int32 on 386
	}
	limSecs, limRefused, limRSS := run("--max-mailbox", "1000")
	freeSecs, _, freeRSS := run()

	ch := make(chan int, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	refusedGo := 0
	for i := range n {
		select {
		case ch <- i:
		case <-ctx.Done():
		default:
			refusedGo++
		}
	}
	goSecs := time.Since(t0).Seconds()
	return []row{
		{
			workload: fmt.Sprintf("flood: %d sends to a process that never receives, --max-mailbox 1000 (luarun subprocess)", n),
			luarun:   fmt.Sprintf("%.2f s (%.0f ns per send), peak RSS %.0f MB, %d refused", limSecs, limSecs*1e9/float64(n), float64(limRSS)/1024, limRefused),
			baseline: fmt.Sprintf("goroutine, non-blocking sends to a channel of 1,000: %.2f s (%.0f ns), %d refused", goSecs, goSecs*1e9/float64(n), refusedGo),
			floor:    "—",
			ratio:    fmt.Sprintf("luarun/Go %.0f×", limSecs/goSecs),
			target:   "memory bounded",
		},
		{
			workload: fmt.Sprintf("flood: the same %d sends without a limit", n),
			luarun:   fmt.Sprintf("%.2f s (%.0f ns per send), peak RSS %.0f MB", freeSecs, freeSecs*1e9/float64(n), float64(freeRSS)/1024),
			baseline: "—", floor: "—",
			ratio:  fmt.Sprintf("RSS without/with limit %.0f×", float64(freeRSS)/float64(limRSS)),
			target: "(a warning at 100,000)",
		},
	}
}
