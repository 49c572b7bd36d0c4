package cluster_test

// End-to-end, as an operator runs it: three luarun processes (the
// command, built for the test) on the embedded server with a user,
// password and cluster secret; and a real nats-server started from the
// configuration docs/cluster-operations.md shows, with which a node
// works and a client without the node's permissions cannot publish on
// the spawn subject.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// secureLua is run by every node: "serve" registers svc and answers
// pings; "idle" only stays up (spawn_on's target); "drive" uses both.
const secureLua = `
function square(n) return n * n, process.node() end

local function wait_nodes(n)
  while #process.nodes() < n do time.sleep(0.05) end
end

function main(role)
  print(process.node() .. " up")
  if role == "serve" then
    assert(process.register("svc"))
    print("svc registered")
    while true do
      local msg, from = process.receive()
      process.send(msg.reply, {pong = msg.ping, node = process.node()})
    end
  elseif role == "idle" then
    process.receive()
  end
  wait_nodes(3)
  local svc
  repeat svc = process.whereis("svc"); if not svc then time.sleep(0.05) end until svc
  assert(process.send(svc, {ping = 7, reply = process.self()}))
  local answer = process.receive(30)
  assert(answer and answer.pong == 7 and answer.node == "b", "no pong from b")
  local pid = assert(process.spawn_on("c", "secure.lua", "square", 9))
  local ok, sq, node = process.wait(pid)
  assert(ok and sq == 81 and node == "c", tostring(sq))
  print("e2e ok")
end
`

// TestThreeLuarunsOnTheEmbeddedServerWithASecret: a starts the embedded
// server (user and password required), b and c join it; with a cluster
// secret on each, a finds b's registered name, sends to it and gets the
// answer, and spawns on c and waits for the result.
func TestThreeLuarunsOnTheEmbeddedServerWithASecret(t *testing.T) {
	bin := buildLuarun(t) // first: it may skip
	dir := t.TempDir()
	script := filepath.Join(dir, "secure.lua")
	require.NoError(t, os.WriteFile(script, []byte(secureLua), 0o644))
	addr := freeAddr(t)
	env := append(os.Environ(), "LUARUN_CLUSTER_PASSWORD=pw-e2e", "LUARUN_CLUSTER_SECRET=secret-e2e")
	auth := []string{"--cluster-user", "luarun"}
	a := startNode(t, bin, env, "a", append([]string{"--cluster", "embedded", "--cluster-listen", addr}, auth...), script, "drive")
	a.until(t, "a up")
	url := "nats://" + addr
	b := startNode(t, bin, env, "b", append([]string{"--cluster", url}, auth...), script, "serve")
	startNode(t, bin, env, "c", append([]string{"--cluster", url}, auth...), script, "idle")
	b.until(t, "svc registered")
	a.until(t, "e2e ok")
	// the server takes no client without the password
	_, err := nats.Connect(url, nats.UserInfo("luarun", "wrong"))
	require.Error(t, err)
}

// startNode starts a luarun process with env and the cluster flags,
// running script with args.
func startNode(t *testing.T, bin string, env []string, name string, flags []string, script string, args ...string) *luarunNode {
	t.Helper()
	argv := append(append(append([]string{}, flags...), "--node", name, script), args...)
	return startCmd(t, exec.Command(bin, argv...), env, name)
}

// operatorsConfig is the nats-server configuration of the guide, without
// its tls block (the guide's certificate paths), on port and store.
func operatorsConfig(t *testing.T, port int, store string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cluster-operations.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)## A nats-server configuration\n\n```\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, m, "the guide's configuration block")
	conf := string(m[1])
	conf = regexp.MustCompile(`(?s)\ntls \{.*?\n\}\n`).ReplaceAllString(conf, "\n")
	conf = strings.Replace(conf, "port: 4222", "port: "+strconv.Itoa(port), 1)
	conf = strings.Replace(conf, `"/var/lib/nats"`, strconv.Quote(store), 1)
	require.Contains(t, conf, "permissions", "the guide's users have permissions")
	return conf
}

// TestTheGuidesServerConfig: a real nats-server started from the
// guide's configuration (its TLS block left out) takes a luarun node
// that runs a script across two nodes; a user of the account that lacks
// the node's permissions cannot publish on a spawn subject.
func TestTheGuidesServerConfig(t *testing.T) {
	bin := buildLuarun(t) // first: it may skip
	server, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("no nats-server binary (apt-get install nats-server): the guide's configuration is not tried")
	}
	dir := t.TempDir()
	port := freePort(t)
	conf := operatorsConfig(t, port, filepath.Join(dir, "js"))
	// a second user of the same account, without the node's permissions
	conf = strings.Replace(conf, "    ]\n  }\n}", "      { user: reader, password: r, permissions: { publish: [\"_INBOX.>\"], subscribe: [\"_INBOX.>\"] } }\n    ]\n  }\n}", 1)
	require.Contains(t, conf, "user: reader", "the users block as the guide writes it")
	confFile := filepath.Join(dir, "luarun.conf")
	require.NoError(t, os.WriteFile(confFile, []byte(conf), 0o644))
	srv := exec.Command(server, "-c", confFile)
	srv.Env = append(os.Environ(), "LUARUN_NODE_PASSWORD=node-pw")
	s := startCmd(t, srv, srv.Env, "nats-server")
	s.until(t, "Server is ready")
	url := "nats://127.0.0.1:" + strconv.Itoa(port)

	env := append(os.Environ(), "LUARUN_CLUSTER_PASSWORD=node-pw", "LUARUN_CLUSTER_SECRET=guide-secret")
	auth := []string{"--cluster", url, "--cluster-user", "luarun"}
	dirScript := filepath.Join(dir, "secure.lua")
	require.NoError(t, os.WriteFile(dirScript, []byte(secureLua), 0o644))
	a := startNode(t, bin, env, "a", auth, dirScript, "drive")
	b := startNode(t, bin, env, "b", auth, dirScript, "serve")
	startNode(t, bin, env, "c", auth, dirScript, "idle")
	b.until(t, "svc registered")
	a.until(t, "e2e ok")

	// the reader connects, and its publish on a spawn subject is refused
	errs := make(chan error, 1)
	nc, err := nats.Connect(url, nats.UserInfo("reader", "r"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.Publish("luarun.spawn.1", []byte("anything")))
	require.NoError(t, nc.Flush())
	select {
	case err := <-errs:
		require.ErrorContains(t, err, "Permissions Violation for Publish")
	case <-time.After(time.Minute):
		t.Fatal("the server did not refuse the publish")
	}
}

// freePort is a loopback port no one listens on now.
func freePort(t *testing.T) int {
	_, port, _ := strings.Cut(freeAddr(t), ":")
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return n
}

// TestRestartAfterKill9JoinsAgain: a luarun node killed with SIGKILL and
// started again at once under its name joins (it was refused until its
// name's claim expired, 6 s): its claim, silent for 4 heartbeats, is
// taken over. The time it took is logged (about 2 s of watching the
// claim, plus the start).
func TestRestartAfterKill9JoinsAgain(t *testing.T) {
	bin := buildLuarun(t) // first: it may skip
	dir := t.TempDir()
	script := filepath.Join(dir, "secure.lua")
	require.NoError(t, os.WriteFile(script, []byte(secureLua), 0o644))
	addr := freeAddr(t)
	env := append(os.Environ(), "LUARUN_CLUSTER_SECRET=secret-e2e")
	a := startNode(t, bin, env, "a", []string{"--cluster", "embedded", "--cluster-listen", addr}, script, "idle")
	a.until(t, "a up")
	url := "nats://" + addr
	b := startNode(t, bin, env, "b", []string{"--cluster", url}, script, "idle")
	b.until(t, "b up")
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	again := startNode(t, bin, env, "b", []string{"--cluster", url}, script, "idle")
	again.until(t, "b up")
	t.Logf("b joined again %v after its kill", time.Since(killed).Round(time.Millisecond))
}
