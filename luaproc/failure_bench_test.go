package luaproc

// Benchmarks of failure handling, each beside its baselines:
//
//	CallReply   a call/reply round trip between two Lua processes  vs  a
//	            send+receive round trip between the same two (the target:
//	            ≤ 1.3×). The harness (go run ./bench -only failure) runs
//	            the Go baseline beside them: two goroutines, each with its
//	            own LState, a request carrying its reply channel.
//	ProcessEnd  spawn a process that ends at once and hear of its end,
//	            per process: by a last message it sends (no monitor), by a
//	            monitor's down (spawn_monitor), by process.wait, by a
//	            trapped link's exit  vs  a goroutine closing a channel.
//	            What a monitor adds to a process's end is the difference
//	            between the first two.

import "testing"

const callReplyLua = `
function server()
  while true do
    local m, _, kind, call = process.receive()
    if kind == "call" then process.reply(call, m) elseif m == 0 then return end
  end
end
function main(n)
  local s = process.spawn("server")
  for i = 1, n do process.call(s, i) end
  process.send(s, 0)
end`

// BenchmarkCallReply reports per round trip.
func BenchmarkCallReply(b *testing.B) {
	b.Run("send+receive", func(b *testing.B) {
		rt := benchRuntime(b)
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, pingPongLua, "main", int64(b.N))
	})
	b.Run("call+reply", func(b *testing.B) {
		rt := benchRuntime(b)
		b.ReportAllocs()
		b.ResetTimer()
		runBench(b, rt, callReplyLua, "main", int64(b.N))
	})
}

const processEndLua = `
function quits(boss) process.send(boss, true) end
function ends() end
function by_message(n)
  local me = process.self()
  for i = 1, n do process.spawn("quits", me); process.receive() end
end
function by_monitor(n)
  for i = 1, n do process.spawn_monitor("ends"); process.receive() end
end
function by_wait(n)
  for i = 1, n do process.wait(process.spawn("ends")) end
end
function by_link(n)
  process.trap_exits(true)
  for i = 1, n do process.spawn_link("ends"); process.receive() end
end`

// BenchmarkProcessEnd reports per process: spawned, ended, heard of.
func BenchmarkProcessEnd(b *testing.B) {
	for _, entry := range []string{"by_message", "by_monitor", "by_wait", "by_link"} {
		b.Run(entry, func(b *testing.B) {
			rt := benchRuntime(b)
			b.ReportAllocs()
			b.ResetTimer()
			runBench(b, rt, processEndLua, entry, int64(b.N))
		})
	}
	b.Run("goroutine+channel", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			done := make(chan struct{})
			go func() { close(done) }()
			<-done
		}
	})
}
