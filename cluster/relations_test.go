package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/cluster"
	"github.com/luarun/luarun/luaproc"
)

const relationsLua = `
-- a server: answers calls, fails on "fail" with a table as its error
function server()
  while true do
    local msg, from, kind, call = process.receive()
    if msg == "fail" then error({code = 7}) end
    if kind == "call" then process.reply(call, {echo = msg, node = process.node()}) end
  end
end

-- waits until both nodes heard each other's heartbeat
local function meet()
  while #process.nodes() < 2 do time.sleep(0.01) end
end

local function await(want)
  local ev, from, kind = process.receive(10)
  assert(kind == want, "expected a " .. want .. " event, got " .. tostring(kind) .. " " .. tostring(ev))
  return ev
end

-- calls and monitors of processes on another node
function client(s1, s3)
  meet()
  for i = 1, 50 do
    local r, err = process.call(s1, i, 10)
    assert(r and r.echo == i and r.node == "beta", tostring(err))
  end
  -- a monitor's down carries the reason, a table included
  local ref = process.monitor(s1)
  process.send(s1, "fail")
  local down = await("down")
  assert(down.ref == ref and down.pid == s1, "the down names its monitor")
  assert(type(down.reason) == "table" and down.reason.code == 7, tostring(down.reason))
  -- a call waiting on a process that fails ends with its reason
  -- s1 has ended: "no process", or, when the down of the monitor its
  -- earlier calls kept has not been taken yet, its reason
  local r, err = process.call(s1, "fail", 10)
  assert(r == nil and (err:find("no process") or err:find("ended before replying")), tostring(err))
  process.monitor(s3)
  r, err = process.call(s3, "fail", 10)
  assert(r == nil and err:find("ended before replying"), tostring(err))
  assert(await("down").pid == s3)
  return true
end

function linker(s2, s3, s4)
  meet()
  process.trap_exits(true)
  -- a link's exit carries the kill's reason
  process.link(s2)
  assert(process.kill(s2, "enough"))
  local exit = await("exit")
  assert(exit.pid == s2 and exit.reason == "killed: enough", tostring(exit.reason))
  -- a monitor and a link of an ended process fire at once with noproc
  process.monitor(s2)
  assert(await("down").reason == "noproc")
  process.link(s2)
  assert(await("exit").reason == "noproc")
  local r, err = process.call(s2, "x", 10)
  assert(r == nil and err:find("no process"), tostring(err))
  -- after an unlink, no exit
  process.link(s3)
  process.unlink(s3)
  local ref = process.monitor(s3)
  process.send(s3, "fail")
  assert(await("down").ref == ref)
  -- an exit would have come before this answer, on the same path
  assert(process.call(s4, "after", 10))
  assert(process.receive(0) == nil, "no exit came after the unlink")
  return true
end

-- watches a process on a node that goes away: the down and the exit say
-- noconnection; a call waiting on it ends with it
function watcher(peer, inbox)
  meet()
  process.trap_exits(true)
  local ref = process.monitor(peer)
  process.link(peer)
  assert(process.call(peer, "ready?", 10)) -- the monitor and link are in place
  process.send(inbox, "ready")
  local got = {}
  for _ = 1, 2 do
    local ev, _, kind = process.receive(30)
    assert(ev, "nothing came")
    got[kind] = ev
  end
  assert(got.down.ref == ref and got.down.reason == "noconnection", tostring(got.down.reason))
  assert(got.exit.pid == peer and got.exit.reason == "noconnection", tostring(got.exit.reason))
  local ok, err = process.send(peer, "anyone?")
  assert(ok == nil and err:find("not up"), tostring(err))
  return true
end
`

// startOn starts entry of the relations script on rt.
func startOn(t *testing.T, rt *luaproc.Runtime, entry string, args ...any) luaproc.Handle {
	t.Helper()
	s, err := rt.LoadString("relations.lua", relationsLua)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, entry, args...)
	require.NoError(t, err)
	return h
}

func waitOK(t *testing.T, h luaproc.Handle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, true, res[0])
}

// TestRelationsAcrossNodes: Lua processes call, monitor, link and kill
// processes on another node, with the reasons they would see on one.
func TestRelationsAcrossNodes(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a, b := node(t, srv.URL(), "alpha"), node(t, srv.URL(), "beta")
	s1, s2, s3 := startOn(t, b, "server"), startOn(t, b, "server"), startOn(t, b, "server")
	waitOK(t, startOn(t, a, "client", int64(s1.PID()), int64(s3.PID())))
	s4, s5 := startOn(t, b, "server"), startOn(t, b, "server")
	waitOK(t, startOn(t, a, "linker", int64(s2.PID()), int64(s4.PID()), int64(s5.PID())))
}

// TestNodeGoneFiresNoconnection: when a node stops (its heartbeats end,
// as when it is killed), the monitors and links on its processes fire
// with "noconnection" within a few heartbeats, and sends to it fail.
func TestNodeGoneFiresNoconnection(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a := node(t, srv.URL(), "alpha")
	b, nb := joinNode(t, srv.URL(), "beta")
	peer := startOn(t, b, "server")
	inbox, err := a.NewInbox()
	require.NoError(t, err)
	w := startOn(t, a, "watcher", int64(peer.PID()), int64(inbox.PID()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inbox.Monitor(w.PID()) // a watcher that fails says why
	m, err := inbox.Receive(ctx)
	require.NoError(t, err)
	if m.Kind == "down" {
		_, err := w.Result()
		t.Fatalf("the watcher ended before it was ready: %v", err)
	}
	require.Equal(t, "ready", m.Value)
	gone := time.Now()
	nb.Close() // beta's runtime runs on, cut off
	waitOK(t, w)
	t.Logf("noticed in %v (heartbeat 100 ms, down after 4)", time.Since(gone).Round(time.Millisecond))
}

// TestInboxCallsAcrossNodes: a Go inbox answers a Lua process's call
// from another node, and calls one there.
func TestInboxCallsAcrossNodes(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a, b := node(t, srv.URL(), "alpha"), node(t, srv.URL(), "beta")
	inbox, err := a.NewInbox()
	require.NoError(t, err)
	s, err := b.LoadString("asker.lua", `
function asker(inbox)
  while #process.nodes() < 2 do time.sleep(0.01) end
  local r, err = process.call(inbox, {q = "sum", of = {1, 2, 3}}, 10)
  assert(r, err)
  return r
end`)
	require.NoError(t, err)
	h, err := b.Start(context.Background(), s, "asker", int64(inbox.PID()))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := inbox.Receive(ctx)
	require.NoError(t, err)
	require.Equal(t, "call", m.Kind)
	require.Equal(t, h.PID(), m.From)
	require.Equal(t, map[string]any{"q": "sum", "of": []any{int64(1), int64(2), int64(3)}}, m.Value)
	require.NoError(t, inbox.Reply(m, int64(6)))
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(6), res[0])

	_, err = inbox.Call(ctx, h.PID(), "anyone?") // ended: its down ends the call
	require.ErrorContains(t, err, "ended before replying: noproc")
}
