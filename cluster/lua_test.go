package cluster_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/cluster"
	"github.com/luarun/luarun/luaproc"
)

// node starts a luarun runtime on a new node of the cluster at url.
func node(t *testing.T, url, name string) *luaproc.Runtime {
	t.Helper()
	rt, _ := joinNode(t, url, name)
	return rt
}

// joinNode is node, with the cluster node (to close it before the
// runtime, as a node killed or cut off).
func joinNode(t *testing.T, url, name string) (*luaproc.Runtime, *cluster.Node) {
	t.Helper()
	// a context that ends when Join returns, as the command's does:
	// nothing the node keeps may live under it
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	// a node silent for 10 beats (1 s) is down: at 4 (0.4 s) a stall of a
	// loaded machine took a live node down mid-test
	n, err := cluster.Join(ctx, cluster.Config{URL: url, Name: name, Heartbeat: 100 * time.Millisecond, DownAfter: 10})
	cancel()
	require.NoError(t, err)
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Cluster: n, Logger: slog.New(slog.DiscardHandler), Stdout: io.Discard})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, rt.Shutdown(ctx))
		n.Close() // an error when the test closed it already
	})
	return rt, n
}

const echoLua = `
function echo()
  while true do
    local msg, from, kind, call = process.receive()
    if msg == "stop" then return process.node() end
    local answer = {echo = msg, by = process.self(), node = process.node()}
    if kind == "call" then
      process.reply(call, answer)
    else
      process.send(from, answer)
    end
  end
end
-- sends each of msgs to peer and returns what came back, in order; the
-- PIDs that came in the replies are used again, so they must be valid here
function ask(peer, n)
  local nodes
  repeat nodes = process.nodes(); time.sleep(0.01) until #nodes == 2
  local out = {}
  for i = 1, n do
    assert(process.send(peer, i))
    local r = process.receive(10)
    assert(type(r) == "table", "no reply")
    out[i] = r.echo
    peer = r.by
  end
  local ok, err = process.send(peer + 2^39 * 100, "to a node that is not up")
  assert(ok == nil and err:find("is not up"), tostring(err))
  -- a timer's message crosses too (a scalar made a payload value)
  process.send_after(0.001, peer, 999)
  assert(process.receive(10).echo == 999)
  -- calls cross, and their answers come back
  for i = 1, 20 do
    local r, cerr = process.call(peer, {n = i}, 10)
    assert(r and r.echo.n == i and r.node == "beta", tostring(cerr))
  end
  process.send(peer, "stop")
  return out, process.node(), table.concat(nodes, ",")
end`

// TestLuaProcessesAcrossNodes: a Lua process on one node sends to one on
// another, which answers to the PID that came with the message, with its
// own PID in the answer; the answers come in order and the returned PIDs
// reach the same process; process.node and process.nodes name the nodes;
// a send to a node that is not up returns nil and an error; send_after
// crosses; calls cross and get their answers.
func TestLuaProcessesAcrossNodes(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close) // after the nodes' cleanups
	a, b := node(t, srv.URL(), "alpha"), node(t, srv.URL(), "beta")
	sa, err := a.LoadString("ask.lua", echoLua)
	require.NoError(t, err)
	sb, err := b.LoadString("echo.lua", echoLua)
	require.NoError(t, err)
	echo, err := b.Start(context.Background(), sb, "echo")
	require.NoError(t, err)
	ask, err := a.Start(context.Background(), sa, "ask", int64(echo.PID()), int64(200))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := ask.Wait(ctx)
	require.NoError(t, err)
	out := res[0].([]any)
	require.Len(t, out, 200)
	for i, v := range out {
		assert.Equal(t, int64(i+1), v)
	}
	assert.Equal(t, "alpha", res[1])
	assert.Equal(t, "alpha,beta", res[2])
	res, err = echo.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []any{"beta"}, []any(res))
}
