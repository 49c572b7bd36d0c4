package main

// Workloads of failure handling: a call/reply round trip beside a
// send+receive round trip, and what a monitor adds to a process's end.
// Each runs for several rounds, on a fresh runtime each, with its sides
// alternating; the medians are reported, and ratios as the median of the
// rounds' own ratios with their range.

import (
	"fmt"
	"slices"
	"time"

	lua "github.com/luarun/luarun/lua"
)

const failureLua = `
function echo()
  while true do
    local m, from, kind, call = process.receive()
    if kind == "call" then process.reply(call, m)
    elseif m == 0 then return
    else process.send(from, m) end
  end
end

-- roundtrips: n round trips to an echo process, by call or by send and
-- receive; seconds per round trip.
function roundtrips(how, n)
  local s = process.spawn("echo")
  local t0 = time.monotonic()
  if how == "call" then
    for i = 1, n do process.call(s, i) end
  else
    for i = 1, n do process.send(s, i); process.receive() end
  end
  local dt = time.monotonic() - t0
  process.send(s, 0)
  return dt / n
end

function quits(boss) process.send(boss, true) end
function ends() end

-- ending: n processes spawned one after the other, each heard of when it
-- ends: by a last message it sends (no monitor), by a monitor's down, by
-- process.wait, or by a trapped link's exit; seconds per process.
function ending(how, n)
  local t0 = time.monotonic()
  if how == "message" then
    local me = process.self()
    for i = 1, n do process.spawn("quits", me); process.receive() end
  elseif how == "monitor" then
    for i = 1, n do process.spawn_monitor("ends"); process.receive() end
  elseif how == "wait" then
    for i = 1, n do process.wait(process.spawn("ends")) end
  else
    process.trap_exits(true)
    for i = 1, n do process.spawn_link("ends"); process.receive() end
  end
  return (time.monotonic() - t0) / n
end

function sends(boss, n, tables)
  process.receive()
  local me = process.self()
  for i = 1, n do
    process.send(boss, tables and {pid = me, ref = i, reason = "normal"} or i)
  end
end

-- fan: one process ends under n monitors of this one, and the n downs
-- are received; or, instead of ending, it sends this one n messages:
-- numbers, or tables like a down's {pid, ref, reason}; seconds per event.
function fan(how, n)
  local pid = process.spawn(how == "monitor" and "echo" or "sends", process.self(), n, how == "table")
  if how == "monitor" then for i = 1, n do process.monitor(pid) end end
  local t0 = time.monotonic()
  process.send(pid, 0)
  for i = 1, n do process.receive() end
  return (time.monotonic() - t0) / n
end`

func failure() []row {
	const rounds = 5
	trips, procs, fanN := size(300000, 30000), size(100000, 10000), size(100000, 10000)
	run := func(entry, how string, n int) time.Duration {
		rt := newRuntime(*workers)
		res := runEntry(rt, "failure.lua", failureLua, entry, how, int64(n))
		shutdown(rt)
		return time.Duration(res[0].(float64) * float64(time.Second))
	}
	call := alternate(rounds, func(side string) time.Duration { return run("roundtrips", side, trips) }, "call", "send")
	callA, callGo := callBaselines(trips)
	ends := alternate(rounds, func(side string) time.Duration { return run("ending", side, procs) },
		"message", "monitor", "wait", "link")
	endGo := goEnds(procs)
	fan := alternate(rounds, func(side string) time.Duration { return run("fan", side, fanN) }, "monitor", "message", "table")
	return []row{
		{
			workload: fmt.Sprintf("call/reply: %d round trips between two processes, vs send+receive (per round trip, medians of %d)", trips, rounds),
			luarun:   fmtDur(call.median("call")) + " (send+receive " + fmtDur(call.median("send")) + ")",
			baseline: fmtDur(callA) + " (reply channel)", floor: "no Lua " + fmtDur(callGo),
			ratio:  "call/send " + call.ratio("call", "send") + fmt.Sprintf("; A/luarun %.2f×", float64(callA)/float64(call.median("call"))),
			target: "call ≤ 1.3× send+receive",
		},
		{
			workload: fmt.Sprintf("process end heard of: %d processes spawned one by one (per process, medians of %d)", procs, rounds),
			luarun: fmt.Sprintf("last message %s; monitor %s; wait %s; link %s", fmtDur(ends.median("message")),
				fmtDur(ends.median("monitor")), fmtDur(ends.median("wait")), fmtDur(ends.median("link"))),
			baseline: "—", floor: "goroutine closing a channel " + fmtDur(endGo),
			ratio:  "monitor/message " + ends.ratio("monitor", "message") + "; link/message " + ends.ratio("link", "message"),
			target: "—",
		},
		{
			workload: fmt.Sprintf("downs: a process under %d monitors ends, vs sending %d messages (per event, medians of %d)", fanN, fanN, rounds),
			luarun: fmt.Sprintf("down %s; message: a number %s, a table like a down's %s", fmtDur(fan.median("monitor")),
				fmtDur(fan.median("message")), fmtDur(fan.median("table"))),
			baseline: "—", floor: "—",
			ratio:  "down/number " + fan.ratio("monitor", "message") + "; down/table " + fan.ratio("monitor", "table"),
			target: "—",
		},
	}
}

// sides are the times of several sides of a workload, round by round.
type sides map[string][]time.Duration

// alternate runs each side once per round, each round starting with the
// next side, and returns their times.
func alternate(rounds int, run func(side string) time.Duration, names ...string) sides {
	s := sides{}
	for r := range rounds {
		for i := range names {
			name := names[(i+r)%len(names)]
			s[name] = append(s[name], run(name))
		}
	}
	return s
}

func (s sides) median(name string) time.Duration { return median(s[name]) }

// ratio is "1.18× (1.12–1.25)": the median of the rounds' own ratios of
// side a to side b, and their range.
func (s sides) ratio(a, b string) string {
	rs := make([]float64, len(s[a]))
	for i := range rs {
		rs[i] = float64(s[a][i]) / float64(s[b][i])
	}
	slices.Sort(rs)
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", rs[len(rs)/2], rs[0], rs[len(rs)-1])
}

// callBaselines are n request/reply round trips between two goroutines,
// a request carrying its reply channel: with Lua on both sides (each
// goroutine its own LState, baseline A), and with no Lua.
func callBaselines(n int) (withLua, noLua time.Duration) {
	type request struct {
		v     lua.LValue
		reply chan lua.LValue
	}
	requests := make(chan request)
	server, client := lua.NewState(), lua.NewState()
	defer server.Close()
	defer client.Close()
	server.SetGlobal("recv", server.NewFunction(func(L *lua.LState) int {
		r := <-requests
		L.Push(r.v)
		L.Push(&lua.LUserData{Value: r.reply})
		return 2
	}))
	server.SetGlobal("reply", server.NewFunction(func(L *lua.LState) int {
		L.CheckUserData(1).Value.(chan lua.LValue) <- L.Get(2)
		return 0
	}))
	client.SetGlobal("call", client.NewFunction(func(L *lua.LState) int {
		reply := make(chan lua.LValue, 1)
		requests <- request{L.Get(1), reply}
		L.Push(<-reply)
		return 1
	}))
	done := make(chan error, 1)
	go func() {
		done <- server.DoString(`while true do local m, r = recv(); reply(r, m); if m == 0 then return end end`)
	}()
	client.SetGlobal("n", lua.LNumber(n))
	t0 := time.Now()
	check(client.DoString(`for i = 1, n do call(i) end`))
	withLua = time.Since(t0) / time.Duration(n)
	check(client.DoString(`call(0)`))
	check(<-done)

	plain := make(chan chan int)
	go func() {
		for reply := range plain {
			reply <- 1
		}
	}()
	t0 = time.Now()
	for range n {
		reply := make(chan int, 1)
		plain <- reply
		<-reply
	}
	noLua = time.Since(t0) / time.Duration(n)
	close(plain)
	return withLua, noLua
}

// goEnds is n goroutines started one after the other, each waited for
// on a channel it closes as it ends.
func goEnds(n int) time.Duration {
	t0 := time.Now()
	for range n {
		done := make(chan struct{})
		go func() { close(done) }()
		<-done
	}
	return time.Since(t0) / time.Duration(n)
}
