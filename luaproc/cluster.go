package luaproc

// A runtime on a node of a cluster (Options.Cluster; the cluster package
// makes one over NATS). The scheduler routes a send to a PID of another
// node through the node (scheduler/relay.go); here a message for another
// node is made a payload value first (a Lua scalar travels as itself
// between local processes only), and process.node and process.nodes
// answer from it. Without a cluster, the runtime is the node "local".

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/internal/nodelink"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// ClusterNode is a runtime's place in a cluster: cluster.Join makes one
// (a *cluster.Node), and an application passes it as Options.Cluster.
// Name and Nodes are all an application calls: the node's name (what
// process.node() answers) and those of the nodes that are up, this one's
// included. What else the runtime needs of the node (relaying messages,
// the cluster's names, spawn requests) is a contract between luaproc and
// the cluster package that an application never sees, so New takes only
// a ClusterNode that the cluster package made, and refuses any other.
type ClusterNode interface {
	Name() string
	Nodes() []string
}

// clusterLink is Options.Cluster's side of that contract, or an error
// for a ClusterNode that is not a node of the cluster package.
func clusterLink(c ClusterNode) (nodelink.Node, error) {
	link, ok := c.(nodelink.Node)
	if !ok {
		return nil, fmt.Errorf("Options.Cluster: %T is not a node of a cluster (make one with cluster.Join)", c)
	}
	return link, nil
}

// spawnCommand is the command of process.spawn_on to another node.
const spawnCommand = "cluster.spawn"

// spawnOn is process.spawn_on(node, path, entry, ...): the PID of a
// process of the script at path started on node (this one too), or nil
// and an error. The script travels with the request.
func (p *luaProcess) spawnOn(L *lua.LState) int {
	p.checkTopLevel(L, "process.spawn_on")
	node, path := L.CheckString(1), L.CheckString(2)
	entry := L.OptString(3, "")
	args := argPayloads(L, 4, "process.spawn_on")
	s, err := p.rt.loadRelative(path, p.script.dir, p.progDir)
	if err != nil {
		L.RaiseError("process.spawn_on: %v", err)
	}
	c := p.rt.cluster
	if c == nil && node == localNode || c != nil && node == c.Name() {
		return p.start(L, s, entry, args)
	}
	if c == nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("spawn on %q: not in a cluster (the node is %q)", node, localNode)))
		return 2
	}
	source, err := os.ReadFile(s.real)
	if err != nil {
		L.RaiseError("process.spawn_on: %v", err)
	}
	return p.block(L, "process.spawn_on", &request{kind: reqCommand, name: spawnCommand,
		args: []any{node, s.name, source, entry, []any(args)}})
}

// spawnInCluster is spawnCommand's handler: the request, in a goroutine.
func (rt *Runtime) spawnInCluster(c scheduler.Call) error {
	node, name, source := c.Args[0].(string), c.Args[1].(string), c.Args[2].([]byte)
	entry, args := c.Args[3].(string), c.Args[4].([]any)
	go func() {
		ctx, cancel := context.WithTimeout(c.Ctx, spawnTimeout)
		defer cancel()
		request := rt.remoteEnds.begin()
		pid, err := rt.cluster.SpawnOn(ctx, node, nodelink.SpawnRequest{Name: name, Source: source, Entry: entry, Args: args, Allowed: rt.permissions(), From: rt.remoteEnds.collector})
		if err != nil {
			// Finished before the requester resumes: its next request
			// must not find this one still in flight (an end that came
			// for this one's process would then wait for that one).
			rt.remoteEnds.finish(request)
			c.Complete(payload.Payloads{nil, err.Error()})
			return
		}
		rt.watchRemote(c.PID, pid)
		rt.remoteEnds.finish(request) // after the claim (remoteends.go)
		if !c.Complete(payload.Payloads{int64(pid)}) {
			rt.remoteEnds.release(pid, c.PID) // the process ended meanwhile
		}
	}()
	return nil
}

// spawnTimeout bounds a spawn request's round trip.
const spawnTimeout = 10 * time.Second

// permissions are the permissions this runtime allows, sorted.
func (rt *Runtime) permissions() []string {
	var out []string
	for name, on := range rt.allowed {
		if on {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// spawnRequested starts a process of a script another node sent, under
// this runtime's permissions. A node whose runtime lacks a permission
// this one has is refused (a --sandbox node cannot reach, through
// another, what its own sandbox denies). Scripts are compiled once per
// content (by its SHA-256) and kept for the runtime's life. An entry the
// script does not have is an error (remotewait.go); from, the
// requesting process, hears of the new one's end.
func (rt *Runtime) spawnRequested(req nodelink.SpawnRequest) (PID, error) {
	name, source, entry, args := req.Name, req.Source, req.Entry, req.Args
	if err := rt.coveredBy(req.Allowed); err != nil {
		return 0, err
	}
	sum := sha256.Sum256(source)
	rt.shipped.mu.Lock()
	s := rt.shipped.scripts[sum]
	rt.shipped.mu.Unlock()
	if s == nil {
		var err error
		if s, err = rt.LoadString(name, string(source)); err != nil {
			return 0, err
		}
		rt.shipped.mu.Lock()
		if rt.shipped.scripts == nil {
			rt.shipped.scripts = map[[sha256.Size]byte]*Script{}
		}
		rt.shipped.scripts[sum] = s
		rt.shipped.mu.Unlock()
	}
	if err := payload.CheckAll(args); err != nil {
		return 0, err
	}
	return rt.startRequested(s, entry, args, req.From)
}

// startRequested starts the process of a spawn request and answers once
// its entry is known to exist (remotewait.go).
func (rt *Runtime) startRequested(s *Script, entry string, args []any, from scheduler.PID) (scheduler.PID, error) {
	entries := s.entries.Load()
	named := entry != "" && entry != supervisorEntry
	if named && entries != nil && !slices.Contains(*entries, entry) {
		return 0, &EntryError{Script: s.name, Entry: entry, Entries: *entries}
	}
	child := rt.newProcess(s)
	// as a child of process.spawn: a named entry makes its chunk module
	// initialisation; its failure is reported here, unless watched
	child.topLevel = entry != ""
	answer := &spawnAnswer{waiter: from, resolved: make(chan error, 1)}
	rt.spawnAnswers.Store(child, answer)
	rt.answering.Add(1)
	h, _, err := rt.sched.SubmitWith(child, entry, args, scheduler.SubmitOptions{})
	if err != nil {
		if _, ok := rt.spawnAnswers.LoadAndDelete(child); ok {
			rt.answering.Add(-1)
		}
		return 0, err
	}
	if named && entries == nil {
		if err := answer.await(); err != nil {
			return 0, err
		}
	}
	return h.PID(), nil
}

// coveredBy returns an error unless allowed has every permission this
// runtime has.
func (rt *Runtime) coveredBy(allowed []string) error {
	has := map[string]bool{}
	for _, a := range allowed {
		has[a] = true
	}
	for _, p := range rt.permissions() {
		if !has[p] {
			return fmt.Errorf("refused: this node allows %q, which the requesting node does not", p)
		}
	}
	return nil
}

// shippedScripts are the scripts other nodes sent, by the hash of their
// source.
type shippedScripts struct {
	mu      sync.Mutex
	scripts map[[sha256.Size]byte]*Script
}

// registerCommand is the command of process.register in a cluster.
const registerCommand = "cluster.register"

// registerInCluster is registerCommand's handler: process.register's
// registerCluster, in a goroutine.
func (rt *Runtime) registerInCluster(c scheduler.Call) error {
	name, pid := c.Args[0].(string), c.Args[1].(scheduler.PID)
	go func() {
		if err := rt.registerCluster(c.Ctx, name, pid); err != nil {
			c.Complete(payload.Payloads{nil, err.Error()})
			return
		}
		c.Complete(payload.Payloads{true})
	}()
	return nil
}

// registerCluster is the cluster-wide part of a registration, after the
// scheduler's: a name the cluster refuses is given back in the scheduler.
func (rt *Runtime) registerCluster(ctx context.Context, name string, pid scheduler.PID) error {
	err := rt.cluster.Register(ctx, name, pid)
	if err != nil {
		if holder, ok := rt.sched.Whereis(name); ok && holder == pid {
			rt.sched.Unregister(name)
		}
	}
	return err
}

// whereis finds the process registered as name: on this node, else
// anywhere in the cluster.
func (rt *Runtime) whereis(name string) (scheduler.PID, bool) {
	if pid, ok := rt.sched.Whereis(name); ok || rt.cluster == nil {
		return pid, ok
	}
	return rt.cluster.Whereis(name)
}

// localNode is process.node() without a cluster.
const localNode = "local"

// node is process.node(): this node's name.
func (p *luaProcess) node(L *lua.LState) int {
	if c := p.rt.cluster; c != nil {
		L.Push(lua.LString(c.Name()))
	} else {
		L.Push(lua.LString(localNode))
	}
	return 1
}

// nodes is process.nodes(): the names of the nodes that are up, sorted.
func (p *luaProcess) nodes(L *lua.LState) int {
	names := []string{localNode}
	if c := p.rt.cluster; c != nil {
		names = c.Nodes()
	}
	t := L.CreateTable(len(names), 0)
	for _, name := range names {
		t.Append(lua.LString(name))
	}
	L.Push(t)
	return 1
}

// remote reports whether pid is a process of another node.
func (rt *Runtime) remote(pid scheduler.PID) bool { return pid.Node() != rt.node }
