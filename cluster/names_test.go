package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/cluster"
)

const namesLua = `
local function meet()
  while #process.nodes() < 2 do time.sleep(0.01) end
end

-- waits until f() is true (the registry reaches a node through a watch)
local function eventually(f)
  while not f() do time.sleep(0.01) end
end

function holder(name)
  assert(process.register(name))
  assert(process.register(name), "registering a name again is no error")
  local msg = process.receive()
  assert(msg == "hello by name", tostring(msg))
  return true
end

-- on the other node: finds the holder, cannot take its name, sends to it
-- by name, and takes the name once the holder has ended
function seeker(name, holder)
  meet()
  eventually(function() return process.whereis(name) == holder end)
  local ok, err = process.register(name)
  assert(ok == nil and err:find("taken"), tostring(err))
  assert(process.whereis(name) == holder, "a refused register leaves the name as it was")
  process.monitor(holder)
  assert(process.send(name, "hello by name"))
  local down, _, kind = process.receive()
  assert(kind == "down" and down.reason == "normal", tostring(down.reason))
  eventually(function() return process.register(name) end)
  assert(process.whereis(name) == process.self())
  return true
end

-- on the other node: the holder's node went away, so its name is free
function survivor(name, holder, inbox)
  meet()
  eventually(function() return process.whereis(name) == holder end)
  assert(not process.register(name))
  process.send(inbox, "seen")
  eventually(function() return process.whereis(name) == nil end)
  assert(process.register(name))
  assert(process.whereis(name) == process.self())
  return true
end

function sleeper(name)
  assert(process.register(name))
  process.receive()
end
`

// TestNamesAcrossNodes: a name is held by one process in the cluster,
// found and used from another node, and free again when its holder ends.
func TestNamesAcrossNodes(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a, b := node(t, srv.URL(), "alpha"), node(t, srv.URL(), "beta")
	sa, err := a.LoadString("names.lua", namesLua)
	require.NoError(t, err)
	sb, err := b.LoadString("names.lua", namesLua)
	require.NoError(t, err)
	h, err := a.Start(context.Background(), sa, "holder", "db")
	require.NoError(t, err)
	s, err := b.Start(context.Background(), sb, "seeker", "db", int64(h.PID()))
	require.NoError(t, err)
	waitOK(t, h)
	waitOK(t, s)
}

// TestNamesOfANodeThatWentAway: the names of a node that went away are
// free for the others.
func TestNamesOfANodeThatWentAway(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a, na := joinNode(t, srv.URL(), "alpha")
	b := node(t, srv.URL(), "beta")
	sa, err := a.LoadString("names.lua", namesLua)
	require.NoError(t, err)
	sb, err := b.LoadString("names.lua", namesLua)
	require.NoError(t, err)
	h, err := a.Start(context.Background(), sa, "sleeper", "svc")
	require.NoError(t, err)
	inbox, err := b.NewInbox()
	require.NoError(t, err)
	s, err := b.Start(context.Background(), sb, "survivor", "svc", int64(h.PID()), int64(inbox.PID()))
	require.NoError(t, err)
	inbox.Monitor(s.PID())
	m, err := inbox.Receive(t.Context())
	require.NoError(t, err)
	require.Equal(t, "seen", m.Value, "the survivor ended early: %v", m.Value)
	na.Close() // alpha's runtime runs on, cut off
	waitOK(t, s)
}

const lateNamesLua = `
local function meet()
  while #process.nodes() < 2 do time.sleep(0.01) end
end
local function eventually(f)
  while not f() do time.sleep(0.01) end
end

-- registers after both nodes are up, lets go when told, then ends
function lateholder(inbox)
  meet()
  assert(process.register("late"))
  process.send(inbox, "registered")
  assert(process.receive() == "unregister")
  assert(process.unregister("late"))
  process.send(inbox, "unregistered")
  process.receive()
end

-- on the other node: sees the name come, and go; a send by it then fails
function lateseeker(holder)
  meet()
  eventually(function() return process.whereis("late") == holder end)
  assert(process.send("late", "unregister"))
  eventually(function() return process.whereis("late") == nil end)
  local ok, err = process.send("late", "after the release")
  assert(ok == nil and err:find("no process registered"), tostring(err))
  return true
end
`

// TestNamesRegisteredAfterJoin: a name registered on one node after the
// other joined (whose Join's context has ended) is seen there, used, and
// its release is seen too: a send by it returns nil, err.
func TestNamesRegisteredAfterJoin(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a, b := node(t, srv.URL(), "alpha"), node(t, srv.URL(), "beta")
	sa, err := a.LoadString("late.lua", lateNamesLua)
	require.NoError(t, err)
	sb, err := b.LoadString("late.lua", lateNamesLua)
	require.NoError(t, err)
	inbox, err := a.NewInbox()
	require.NoError(t, err)
	h, err := a.Start(context.Background(), sa, "lateholder", int64(inbox.PID()))
	require.NoError(t, err)
	m, err := inbox.Receive(t.Context())
	require.NoError(t, err)
	require.Equal(t, "registered", m.Value)
	s, err := b.Start(context.Background(), sb, "lateseeker", int64(h.PID()))
	require.NoError(t, err)
	waitOK(t, s)
	m, err = inbox.Receive(t.Context())
	require.NoError(t, err)
	require.Equal(t, "unregistered", m.Value)
	require.NoError(t, a.Send(h.PID(), "end"))
}
