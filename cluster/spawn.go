package cluster

// Spawning on another node (process.spawn_on).
//
// The request goes to the node's subject "<cluster>.spawn.<number>" as a
// NATS request, and the answer comes back on its reply inbox. It carries
// the script itself — its name, its source, the entry and the arguments,
// a list in payload's wire form — so that nodes need not share files; the
// receiving runtime compiles it on arrival (and keeps it by the hash of
// its source: luaproc) and starts the process under its own permissions
// (--sandbox applies). The answer is the new process's PID, or an error.
//
// Only clients of the cluster's NATS account can publish on its
// subjects: accounts are NATS's isolation (a client of another account
// reaches no subscriber here unless the server's configuration exports
// the subject to it), so a node never runs a script sent from outside
// the account. TestSpawnOutsideTheAccountReachesNoNode checks it.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// SpawnFunc starts a process of the script (its name and source) at
// entry with args on this node: the runtime's side of a spawn request.
type SpawnFunc = func(name string, source []byte, entry string, args []any) (scheduler.PID, error)

// ServeSpawns makes this node take spawn requests from the other nodes,
// with spawn; the runtime calls it before Attach. A node that does not
// answers them with an error.
func (n *Node) ServeSpawns(spawn SpawnFunc) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.spawn = spawn
}

func (n *Node) spawnSubject(number int) string {
	return n.cfg.Cluster + ".spawn." + fmt.Sprint(number)
}

// SpawnOn starts a process of the script on the node called node, at
// entry with args (payload values), and returns its PID.
func (n *Node) SpawnOn(ctx context.Context, node, name string, source []byte, entry string, args []any) (scheduler.PID, error) {
	number, ok := n.numberOf(node)
	if !ok {
		return 0, fmt.Errorf("spawn on %q: no such node is up", node)
	}
	req, err := payload.AppendWire(nil, []any{name, string(source), entry, args})
	if err != nil {
		return 0, fmt.Errorf("spawn on %q: %w", node, err)
	}
	m, err := n.request(ctx, number, req)
	if err != nil {
		return 0, fmt.Errorf("spawn on %q: %w", node, err)
	}
	v, err := readValue(m.Data)
	switch answer := v.(type) {
	case int64:
		return scheduler.PID(answer), nil
	case string:
		return 0, fmt.Errorf("spawn on %q: %s", node, answer)
	}
	return 0, fmt.Errorf("spawn on %q: a malformed answer (%v)", node, err)
}

// request sends a spawn request to node number. "No responders" from a
// node that is up is asked again, for up to DownAfter heartbeats: after
// a NATS server restart, a node beats again before its connection has
// subscribed anew (a supervisor restarting children then would give up).
func (n *Node) request(ctx context.Context, number int, req []byte) (*nats.Msg, error) {
	deadline := time.Now().Add(n.cfg.Heartbeat * time.Duration(n.cfg.DownAfter))
	for {
		m, err := n.nc.RequestWithContext(ctx, n.spawnSubject(number), req)
		if !errors.Is(err, nats.ErrNoResponders) || !n.up(number) || time.Now().After(deadline) {
			return m, err
		}
		select {
		case <-time.After(n.cfg.Heartbeat / 10):
		case <-ctx.Done():
			return nil, err
		}
	}
}

// numberOf is the number of the node called name, if it is up.
func (n *Node) numberOf(name string) (int, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	for number, p := range n.peers {
		if p.name == name && !p.down {
			return number, true
		}
	}
	return 0, false
}

// spawned answers a spawn request from another node.
func (n *Node) spawned(m *nats.Msg) {
	pid, err := n.startRequested(m.Data)
	var answer any = int64(pid)
	if err != nil {
		answer = err.Error()
	}
	out, _ := payload.AppendWire(nil, answer)
	m.Respond(out)
}

func (n *Node) startRequested(data []byte) (scheduler.PID, error) {
	n.mu.RLock()
	spawn := n.spawn
	n.mu.RUnlock()
	if spawn == nil {
		return 0, errors.New("this node takes no spawn requests")
	}
	v, err := readValue(data)
	req, ok := v.([]any)
	if err != nil || !ok || len(req) != 4 {
		return 0, errors.New("a malformed spawn request")
	}
	name, _ := req[0].(string)
	source, _ := req[1].(string)
	entry, _ := req[2].(string)
	args, _ := req[3].([]any)
	return spawn(name, []byte(source), entry, args)
}
