// Package nodelink is the contract between a runtime (luaproc) and the
// node of a cluster it runs on (cluster.Node): all that the runtime asks
// of its luaproc.Options.Cluster beyond the node's name and the names of
// the nodes that are up. It is internal so that an application that
// embeds luarun sees none of it: luaproc.ClusterNode has Name and Nodes
// alone, and luaproc.New finds the rest by asserting this interface
// (refusing, with an error, a ClusterNode that lacks it).
//
// The node lies below luaproc: it relays the scheduler's messages and
// signals to the other nodes (scheduler.Relay, Attach), keeps the
// cluster's registry of names, and carries spawn requests.
package nodelink

import (
	"context"

	"github.com/luarun/luarun/scheduler"
)

// Node is what a runtime needs of its node.
type Node interface {
	scheduler.Relay
	// Attach starts delivering the messages for this node's processes to
	// s; the runtime calls it once, before any process starts.
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
	// SpawnOn carries req to the node called node and returns the PID of
	// the process it started; ServeSpawns gives the node this runtime's
	// side of the requests of others (the runtime calls it before
	// Attach).
	SpawnOn(ctx context.Context, node string, req SpawnRequest) (scheduler.PID, error)
	ServeSpawns(spawn func(req SpawnRequest) (scheduler.PID, error))
}

// SpawnRequest is process.spawn_on's request to another node: the script
// travels with it, so that nodes need not share files.
type SpawnRequest struct {
	Name   string // the script's name (as errors and tracebacks show it)
	Source []byte // the script's source, compiled on arrival
	Entry  string // the entry point ("" as luaproc.Runtime.Start's)
	Args   []any  // payload values
	// Allowed are the permissions of the requesting runtime: a node
	// refuses a request from one with fewer than its own, so a
	// sandbox holds across nodes.
	Allowed []string
	// From is the requesting process, on the requesting node: it may
	// wait for the new process's end (luaproc/remotewait.go).
	From scheduler.PID
}
