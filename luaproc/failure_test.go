package luaproc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestCrashReports: a process that fails while nothing links, monitors or
// waits on it is logged once, with its entry and where; a watched one, a
// killed one and one a linked failure ended are not.
func TestCrashReports(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "crash.lua", `
function broken() error("unwatched failure") end
function watched() error("watched failure") end
function idle() process.receive() end
function linked(boss)
  process.spawn_link("broken")
  process.receive()
end
function main()
  process.spawn("broken")                      -- reported
  local _, ref = process.spawn_monitor("watched")
  process.receive()                            -- its down
  local w = process.spawn("watched")
  local ok = process.wait(w)                   -- waited on: not reported
  local i = process.spawn("idle")
  process.kill(i, "on purpose")                -- killed: not reported
  local l, lref = process.spawn_monitor("linked", process.self())
  process.receive()                            -- linked's down
  return ok
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false}, res)
	// "broken" may still be queued when main returns: wait for its report,
	// then end every process so that a second report would be in the log
	logs.waitFor(t, "process crashed")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, rt.Shutdown(ctx))
	out := logs.String()
	// once: the "broken" under "linked" is linked, so it is watched
	assert.Equal(t, 1, strings.Count(out, "process crashed: crash.lua:2: unwatched failure"), out)
	assert.Contains(t, out, "entry=broken")
	assert.Contains(t, out, `at="crash.lua:2: in function 'broken'"`)
	assert.NotContains(t, out, "watched failure\"")
	assert.NotContains(t, out, "on purpose")
	assert.NotContains(t, out, "linked process")

	quiet, _, qlogs := newTestRuntime(t, Options{QuietCrashes: true})
	// main returns at once: wait (20 s only bounds a hang) until b has
	// failed, then shut down, so that a report would be in the log
	_, err = runLua(t, quiet, "crash.lua", `function b() error("x") end function main() process.spawn("b") end`, "main")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return quiet.Stats().Failed == 1 }, 20*time.Second, time.Millisecond)
	require.NoError(t, quiet.Shutdown(ctx))
	assert.NotContains(t, qlogs.String(), "crashed")
}

// TestInboxFailureHandling: the Go side monitors a Lua process and gets
// its down on an Inbox, calls it and gets the reply, answers its calls,
// and finds it by name.
func TestInboxFailureHandling(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("svc.lua", `
function serve(inbox)
  process.register("svc")
  -- call the Go side, then serve calls until told to fail
  local answer = process.call(inbox, "question")
  while true do
    local msg, from, kind, call = process.receive()
    if kind == "call" then
      if msg == "fail" then error({why = "asked to"}) end
      process.reply(call, answer .. " " .. msg)
    end
  end
end`)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "serve", int64(inbox.PID()))
	require.NoError(t, err)
	ctx := context.Background()

	q, err := inbox.Receive(ctx)
	require.NoError(t, err)
	require.Equal(t, "call", q.Kind)
	require.Equal(t, "question", q.Value)
	require.NoError(t, inbox.Reply(q, "forty-two"))
	require.Error(t, inbox.Reply(q, "again"), "a call is answered once")

	pid, ok := rt.Whereis("svc")
	require.True(t, ok)
	require.Equal(t, h.PID(), pid)
	ref := inbox.Monitor(pid)
	got, err := inbox.Call(ctx, pid, "is it")
	require.NoError(t, err)
	assert.Equal(t, "forty-two is it", got)

	_, err = inbox.Call(ctx, pid, "fail")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ended before replying")
	down, err := inbox.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, "down", down.Kind)
	assert.Equal(t, map[string]any{"pid": int64(pid), "ref": int64(ref), "reason": map[string]any{"why": "asked to"},
		"traceback": "stack traceback:\n\t[C]: in function 'error'\n\tsvc.lua:9: in function 'serve'"}, down.Value)
	_, ok = rt.Whereis("svc")
	assert.False(t, ok, "the name went with it")
}

// TestMonitorsEndWithTheirWatcher: processes that monitored and called a
// server and then ended leave nothing on it, so the server is unwatched
// when it fails, and its failure is reported. A monitor a dead process
// left behind would count as watching it and hide the failure; a caller's
// monitor never counts (it only learns that its call failed).
func TestMonitorsEndWithTheirWatcher(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "server.lua", `
function serve()
  while true do
    local msg, _, kind, call = process.receive()
    if msg == "fail" then error("server failing") end
    if kind == "call" then process.reply(call, msg) end
  end
end
function client(server)
  process.monitor(server)
  return process.call(server, "ping")
end
function main()
  local server = process.spawn("serve")
  local clients = {}
  for i = 1, 50 do clients[i] = process.spawn("client", server) end
  local answered = 0
  for _, c in ipairs(clients) do
    local ok, v = process.wait(c)
    if ok and v == "ping" then answered = answered + 1 end
  end
  process.send(server, "fail")
  return answered
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(50)}, res)
	logs.waitFor(t, "process crashed: server.lua:5: server failing")
}
