package cluster_test

// process.spawn_on's answers that only the receiving node knows: an
// unknown entry is nil, err; process.wait on the PID gets the results,
// the error, or "noconnection" when the node goes away.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/cluster"
)

const waitedLua = `
function add(a, b) return a + b, process.node() end
function fail() error("boom") end
function block(inbox)
  if inbox then process.send(inbox, "blocking") end
  process.receive()
end
`

const waiterLua = `
local function meet()
  while #process.nodes() < 2 do time.sleep(0.01) end
end

function drive()
  meet()
  -- the script never ran on beta: its entries are known only once its
  -- chunk has run there
  local none, err = process.spawn_on("beta", "waited.lua", "nope")
  assert(none == nil and err:find('unknown entry "nope"'), tostring(err))
  none, err = process.spawn_on("beta", "waited.lua", "nope") -- known now
  assert(none == nil and err:find('unknown entry "nope" %(entries: add, block, fail%)'), tostring(err))
  -- results and errors come back as they do locally
  local pid = assert(process.spawn_on("beta", "waited.lua", "add", 2, 3))
  local ok, sum, node = process.wait(pid)
  assert(ok == true and sum == 5 and node == "beta", tostring(sum))
  pid = assert(process.spawn_on("beta", "waited.lua", "fail"))
  local ok2, e2 = process.wait(pid)
  assert(ok2 == false and e2:find("boom"), tostring(e2))
  -- a result waits for its waiter; once handed over it is gone
  pid = assert(process.spawn_on("beta", "waited.lua", "add", 20, 22))
  local m = process.monitor(pid)
  repeat local _, _, kind = process.receive() until kind == "down"
  assert(select(2, process.wait(pid)) == 42)
  local again, aerr = process.wait(pid)
  assert(again == false and aerr:find("not started by this process"), tostring(aerr))
  -- a timeout, then a kill's reason
  pid = assert(process.spawn_on("beta", "waited.lua", "block"))
  local r, t = process.wait(pid, 0.05)
  assert(r == nil and t == "timeout", tostring(t))
  process.kill(pid, "enough")
  local ok3, e3 = process.wait(pid)
  assert(ok3 == false and e3:find("enough"), tostring(e3))
  return true
end

-- waits on a process on beta, which goes away
function orphan(inbox)
  meet()
  local pid = assert(process.spawn_on("beta", "waited.lua", "block", inbox))
  process.send(inbox, "spawned")
  return process.wait(pid)
end
`

// writeWaitScripts writes the scripts into a directory only alpha reads,
// and returns it.
func writeWaitScripts(t *testing.T) string {
	dir := t.TempDir()
	for name, src := range map[string]string{"waiter.lua": waiterLua, "waited.lua": waitedLua} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	return dir
}

// TestSpawnOnEntryAndWait: spawn_on of an entry the script lacks is nil,
// err (before and after the script ran on the node); process.wait on a
// spawn_on PID returns its results or error, and times out as locally.
func TestSpawnOnEntryAndWait(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a := node(t, srv.URL(), "alpha")
	node(t, srv.URL(), "beta")
	s, err := a.LoadFile(filepath.Join(writeWaitScripts(t), "waiter.lua"))
	require.NoError(t, err)
	h, err := a.Start(context.Background(), s, "drive")
	require.NoError(t, err)
	waitOK(t, h)
}

// TestWaitOnANodeThatGoesAway: a wait on a process of a node that goes
// away ends with false, "noconnection", as a monitor's down does.
func TestWaitOnANodeThatGoesAway(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a := node(t, srv.URL(), "alpha")
	_, nb := joinNode(t, srv.URL(), "beta")
	inbox, err := a.NewInbox()
	require.NoError(t, err)
	s, err := a.LoadFile(filepath.Join(writeWaitScripts(t), "waiter.lua"))
	require.NoError(t, err)
	h, err := a.Start(context.Background(), s, "orphan", int64(inbox.PID()))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inbox.Monitor(h.PID()) // an orphan that fails says why
	for range 2 {          // "blocking" and "spawned", in either order
		m, err := inbox.Receive(ctx)
		require.NoError(t, err)
		if m.Kind == "down" {
			_, err := h.Result()
			t.Fatalf("the waiter ended before its wait: %v", err)
		}
		require.Contains(t, []string{"blocking", "spawned"}, m.Value)
	}
	nb.Close() // beta's runtime runs on, cut off
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, []any{false, "noconnection"}, []any(res))
}
