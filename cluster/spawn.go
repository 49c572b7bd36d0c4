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
// the subject to it). TestSpawnOutsideTheAccountReachesNoNode checks it.
// Within the account, the cluster secret decides (auth.go): a request
// is
//
//	MAC            32 bytes, with a secret only: over the subject and
//	               everything after it
//	sender         the requesting node's number (2 bytes, big-endian)
//	incarnations   the sender's, then the receiver's (8 bytes each)
//	sequence       the sender's count of its requests (8 bytes)
//	the request    a list in payload's wire form: the script's name and
//	               source, the entry, the arguments, the permissions
//	               the sender's runtime has, and the requesting process
//
// and a node runs none whose MAC does not verify (Stats.Forged), that is
// for another incarnation of it, or that it took already (a replay,
// Stats.Stale). The answer starts with a MAC over the request's MAC and
// the answer. The receiving runtime decides what the sender's
// permissions allow (luaproc: a node refuses a request from one with
// fewer permissions than its own, so --sandbox holds across nodes).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/luarun/luarun/internal/nodelink"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// SpawnFunc starts a process of the request's script on this node: the
// runtime's side of a spawn request (nodelink.SpawnRequest says what it
// carries). req.From, the requesting process on the other node, may wait
// for the new process's end (its results are sent to it when it ends).
type SpawnFunc = func(req nodelink.SpawnRequest) (scheduler.PID, error)

// spawnHeader is the length of a spawn request's header after its MAC.
const spawnHeader = 2 + 8 + 8 + 8

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

// SpawnOn starts a process of the request's script on the node called
// node, at its entry with its arguments (payload values), for its From,
// a process of this node, and returns its PID; sr.Allowed are the
// permissions of this node's runtime (the receiver weighs them).
func (n *Node) SpawnOn(ctx context.Context, node string, sr nodelink.SpawnRequest) (scheduler.PID, error) {
	number, inc, ok := n.numberOf(node)
	if !ok {
		return 0, fmt.Errorf("spawn on %q: no such node is up", node)
	}
	perms := make([]any, len(sr.Allowed))
	for i, a := range sr.Allowed {
		perms[i] = a
	}
	req, err := n.spawnRequest(number, inc, []any{sr.Name, string(sr.Source), sr.Entry, sr.Args, perms, int64(sr.From)})
	if err != nil {
		return 0, fmt.Errorf("spawn on %q: %w", node, err)
	}
	m, err := n.request(ctx, number, req)
	if err != nil {
		return 0, fmt.Errorf("spawn on %q: %w", node, err)
	}
	mac := n.sign.size()
	if len(m.Data) < mac || !n.sign.verify(nil, m.Data[:mac], req[:mac], m.Data[mac:]) {
		n.stats.forged.Add(1)
		return 0, fmt.Errorf("spawn on %q: an answer that does not carry the cluster's MAC", node)
	}
	v, err := readValue(m.Data[mac:])
	switch answer := v.(type) {
	case int64:
		return scheduler.PID(answer), nil
	case string:
		return 0, fmt.Errorf("spawn on %q: %s", node, answer)
	}
	return 0, fmt.Errorf("spawn on %q: a malformed answer (%v)", node, err)
}

// spawnRequest is a request (spawn.go's header, then req) to node
// number of incarnation inc, signed.
func (n *Node) spawnRequest(number int, inc uint64, req []any) ([]byte, error) {
	mac := n.sign.size()
	buf := make([]byte, mac+spawnHeader, 512)
	h := buf[mac:]
	binary.BigEndian.PutUint16(h, uint16(n.number))
	binary.BigEndian.PutUint64(h[2:], n.incarnation)
	binary.BigEndian.PutUint64(h[10:], inc)
	binary.BigEndian.PutUint64(h[18:], n.spawnSeq.Add(1))
	buf, err := payload.AppendWire(buf, req)
	if err != nil {
		return nil, err
	}
	if mac > 0 {
		n.sign.sum(nil, buf[:0], []byte(n.spawnSubject(number)), buf[mac:])
	}
	return buf, nil
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

// numberOf is the number and incarnation of the node called name, if
// it is up.
func (n *Node) numberOf(name string) (int, uint64, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	for number, p := range n.peers {
		if p.name == name && !p.down {
			return number, p.incarnation, true
		}
	}
	return 0, 0, false
}

// spawned answers a spawn request from another node; one that does not
// verify, or is a replay, is dropped unanswered (and counted). The answer
// may wait for the new process's chunk (luaproc: is the entry there?),
// so it is made on a goroutine of its own: the subscription goes on to
// the next request.
func (n *Node) spawned(m *nats.Msg) {
	sender, inc, req, ok := n.openSpawn(m)
	if !ok {
		return
	}
	go n.answerSpawn(m, sender, inc, req)
}

// answerSpawn starts the process of a verified request from node sender
// of incarnation inc and answers it. The process starts once this node
// has that node up (awaitPeer): its first act may be a send to it.
func (n *Node) answerSpawn(m *nats.Msg, sender int, inc uint64, req []byte) {
	mac := n.sign.size()
	var pid scheduler.PID
	err := fmt.Errorf("node %d, the requester, is not up here", sender)
	if n.awaitPeer(sender, inc) {
		pid, err = n.startRequested(req)
	}
	var answer any = int64(pid)
	if err != nil {
		answer = err.Error()
	}
	body, _ := payload.AppendWire(nil, answer)
	out := make([]byte, mac, mac+len(body))
	if mac > 0 {
		n.sign.sum(nil, out[:0], m.Data[:mac], body)
	}
	m.Respond(append(out, body...))
}

// openSpawn verifies a spawn request and reads its header, and returns
// its sender's number and incarnation and the request; it counts one it
// drops.
func (n *Node) openSpawn(m *nats.Msg) (sender int, inc uint64, req []byte, ok bool) {
	mac := n.sign.size()
	if len(m.Data) < mac+spawnHeader {
		n.stats.malformed.Add(1)
		return 0, 0, nil, false
	}
	if !n.sign.verify(nil, m.Data[:mac], []byte(m.Subject), m.Data[mac:]) {
		n.stats.forged.Add(1)
		return 0, 0, nil, false
	}
	h := m.Data[mac:]
	sender = int(binary.BigEndian.Uint16(h))
	from, to, seq := binary.BigEndian.Uint64(h[2:]), binary.BigEndian.Uint64(h[10:]), binary.BigEndian.Uint64(h[18:])
	n.mu.Lock()
	w := n.spawnsSeen[sender]
	if w == nil {
		w = &window{}
		n.spawnsSeen[sender] = w
	}
	fresh := to == n.incarnation && w.take(from, seq)
	n.mu.Unlock()
	if !fresh {
		n.stats.stale.Add(1)
		return 0, 0, nil, false
	}
	return sender, from, h[spawnHeader:], true
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
	if err != nil || !ok || len(req) != 6 {
		return 0, errors.New("a malformed spawn request")
	}
	name, _ := req[0].(string)
	source, _ := req[1].(string)
	entry, _ := req[2].(string)
	args, _ := req[3].([]any)
	perms, _ := req[4].([]any)
	from, _ := req[5].(int64)
	allowed := make([]string, 0, len(perms))
	for _, p := range perms {
		if s, ok := p.(string); ok {
			allowed = append(allowed, s)
		}
	}
	return spawn(nodelink.SpawnRequest{Name: name, Source: []byte(source), Entry: entry, Args: args, Allowed: allowed, From: scheduler.PID(from)})
}
