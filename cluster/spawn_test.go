package cluster_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/cluster"
	"github.com/luarun/luarun/luaproc"
)

const workerLua = `
function square(n, reply_to)
  process.send(reply_to, {node = process.node(), square = n * n})
end

function shell()
  process.receive() -- once monitored
  exec.run("true") -- the node runs under --sandbox
end
`

const driverLua = `
local function meet()
  while #process.nodes() < 2 do time.sleep(0.01) end
end

function drive()
  meet()
  local pids = {}
  for i = 1, 20 do
    local pid, err = process.spawn_on("beta", "worker.lua", "square", i, process.self())
    assert(pid, err)
    pids[#pids + 1] = pid
  end
  local sum = 0
  for _ = 1, 20 do
    local r = process.receive(10)
    assert(r and r.node == "beta", "a square from beta")
    sum = sum + r.square
  end
  assert(sum == 2870, sum)
  -- this node is a node too
  local here = process.spawn_on("alpha", "worker.lua", "square", 3, process.self())
  assert(process.receive(10).node == "alpha")
  -- the other node's permissions apply
  local pid = assert(process.spawn_on("beta", "worker.lua", "shell"))
  process.monitor(pid)
  process.send(pid, "go")
  local down = process.receive(10)
  assert(tostring(down.reason):find("exec is not allowed"), tostring(down.reason))
  -- errors: no such node, a script that does not compile
  local none, err = process.spawn_on("gamma", "worker.lua", "square", 1, process.self())
  assert(none == nil and err:find("no such node"), tostring(err))
  local ok, cerr = pcall(process.spawn_on, "beta", "broken.lua", "main")
  assert(not ok and cerr:find("broken.lua:1: <name> or '...' expected near 'end'", 1, true), tostring(cerr)) -- as spawn_file: raised here
  return true
end
`

// TestSpawnOn: process.spawn_on starts processes of a script on another
// node, which need not have the file (the script travels), under that
// node's permissions; an unknown node is an error, a script that does not
// compile is raised as spawn_file raises it.
func TestSpawnOn(t *testing.T) {
	srv, err := cluster.StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	a := node(t, srv.URL(), "alpha")
	node(t, srv.URL(), "beta") // has none of the files
	dir := t.TempDir()
	for name, src := range map[string]string{"driver.lua": driverLua, "worker.lua": workerLua, "broken.lua": "function main( end"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	s, err := a.LoadFile(filepath.Join(dir, "driver.lua"))
	require.NoError(t, err)
	h, err := a.Start(context.Background(), s, "drive")
	require.NoError(t, err)
	waitOK(t, h)
}

// TestSpawnOutsideTheAccountReachesNoNode: a client of another NATS
// account than the cluster's cannot reach a node's spawn subject: NATS
// answers its request with "no responders", and the node runs nothing.
func TestSpawnOutsideTheAccountReachesNoNode(t *testing.T) {
	inside, outside := server.NewAccount("CLUSTER"), server.NewAccount("OUTSIDE")
	opts := &server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Accounts: []*server.Account{inside, outside},
		Users: []*server.User{
			{Username: "node", Password: "n", Account: inside},
			{Username: "mallory", Password: "m", Account: outside},
		},
	}
	srv, err := server.NewServer(opts)
	require.NoError(t, err)
	go srv.Start()
	require.True(t, srv.ReadyForConnections(10e9))
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown() // its goroutines too (goleak)
	})
	require.NoError(t, enableJetStream(srv, inside))

	n, err := joinAs(t, srv.ClientURL(), "node", "n")
	require.NoError(t, err)
	m, err := nats.Connect(srv.ClientURL(), nats.UserInfo("mallory", "m"))
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Request("luarun.spawn."+strconv.Itoa(n.Node()), []byte("anything"), 5e9)
	assert.ErrorIs(t, err, nats.ErrNoResponders)
	// the same request from inside the account reaches the node (which
	// drops it as malformed, unanswered, and counts it)
	in, err := nats.Connect(srv.ClientURL(), nats.UserInfo("node", "n"))
	require.NoError(t, err)
	defer in.Close()
	_, err = in.Request("luarun.spawn."+strconv.Itoa(n.Node()), []byte("anything"), 5e9)
	assert.ErrorIs(t, err, nats.ErrTimeout)
	assert.Equal(t, uint64(1), n.Stats().Malformed)
}

func enableJetStream(srv *server.Server, acc *server.Account) error {
	a, err := srv.LookupAccount(acc.Name)
	if err != nil {
		return err
	}
	return a.EnableJetStream(nil, nil)
}

// joinAs starts a runtime on a node that joins with a user and password.
func joinAs(t *testing.T, url, user, password string) (*cluster.Node, error) {
	n, err := cluster.Join(t.Context(), cluster.Config{URL: url, Name: "inside", User: user, Password: password})
	if err != nil {
		return nil, err
	}
	rt, err := luaproc.New(luaproc.Options{Workers: 1, Cluster: n, Logger: slog.New(slog.DiscardHandler), Stdout: io.Discard})
	require.NoError(t, err)
	t.Cleanup(func() {
		rt.Shutdown(context.Background())
		n.Close()
	})
	return n, nil
}
