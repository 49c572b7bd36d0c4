package luaproc

// A runtime on a node of a cluster (Options.Cluster; the cluster package
// makes one over NATS). The scheduler routes a send to a PID of another
// node through the node (scheduler/relay.go); here a message for another
// node is made a payload value first (a Lua scalar travels as itself
// between local processes only), and process.node and process.nodes
// answer from it. Without a cluster, the runtime is the node "local".

import (
	lua "github.com/yuin/gopher-lua"

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
