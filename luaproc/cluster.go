package luaproc

// A runtime on a node of a cluster (Options.Cluster; the cluster package
// makes one over NATS). The scheduler routes a send to a PID of another
// node through the node (scheduler/relay.go); here a message for another
// node is made a payload value first (a Lua scalar travels as itself
// between local processes only), and process.node and process.nodes
// answer from it. Without a cluster, the runtime is the node "local".

import (
	"context"

	lua "github.com/yuin/gopher-lua"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// ClusterNode is a runtime's place in a cluster (cluster.Join makes one).
type ClusterNode interface {
	scheduler.Relay
	// Attach starts delivering the messages for this node's processes to
	// s; New calls it once, before any process starts.
	Attach(s *scheduler.Scheduler) error
	// Name is this node's name; Nodes the names of the nodes that are up,
	// this one's included.
	Name() string
	Nodes() []string
	// Register gives process pid of this node the name in the whole
	// cluster (it was registered in the node's scheduler first); it may
	// take round trips, and runs in a command. Whereis finds a name's
	// holder on any node, from this node's copy of the registry.
	Register(ctx context.Context, name string, pid scheduler.PID) error
	Whereis(name string) (scheduler.PID, bool)
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
