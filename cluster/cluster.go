// Package cluster joins luarun runtimes on several machines into one
// cluster, over NATS (https://nats.io), an existing messaging server:
// luarun does not carry a transport of its own.
//
// A Node is one runtime's place in the cluster. It implements the
// scheduler's Relay: a message for a PID of another node is published on
// that node's subject, "<cluster>.node.<number>", and the node subscribed
// to it hands it to its scheduler. NATS keeps the order of the messages
// one connection publishes to one subject, and a subscription delivers
// them in order, so the messages between two processes arrive in the
// order they were sent.
//
// Node numbers (the high bits of every PID, scheduler/relay.go) come from
// a counter in a JetStream key-value bucket, taken by compare-and-set, so
// no two nodes of a cluster ever share one and a PID of a node that went
// away never names a process of a later node. Node names are claimed in
// a second bucket whose keys expire: a node refreshes its claim with
// each heartbeat, so a name is free again a few seconds after its node
// was killed. Every node publishes a heartbeat on "<cluster>.heartbeat"
// and keeps the nodes it heard from in the last few heartbeats: those
// are the nodes that are up.
//
// The NATS server must have JetStream enabled (nats-server -js);
// StartServer starts one in this process for trying a cluster on one
// machine and for tests.
package cluster

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Config says how a node joins a cluster.
type Config struct {
	// URL is the NATS server, or several separated by commas:
	// nats://host:4222, or tls://host:4222 for TLS.
	URL string
	// Name is this node's name, unique among the nodes that are up; ""
	// takes the host name and the process ID ("host-1234").
	Name string
	// Cluster prefixes every subject and bucket, so that several
	// clusters may share one NATS server; "" is "luarun".
	Cluster string

	// User and Password, or CredsFile (a NATS credentials file), or
	// Token authenticate to the server.
	User, Password, CredsFile, Token string
	// TLS: a CA file to trust, and a client certificate and key (for
	// servers that verify clients). A tls:// URL turns TLS on with the
	// system's roots.
	CAFile, CertFile, KeyFile string

	// Heartbeat is how often this node says it is up; a node not heard
	// from for DownAfter heartbeats is down. 0: DefaultHeartbeat, and
	// DefaultDownAfter.
	Heartbeat time.Duration
	DownAfter int
}

// Defaults of Config.
const (
	DefaultHeartbeat = 500 * time.Millisecond
	DefaultDownAfter = 4
)

// Node is this runtime's place in a cluster. Join makes one; the runtime
// attaches its scheduler; Close leaves.
type Node struct {
	cfg    Config
	nc     *nats.Conn
	number int
	name   string
	names  jetstream.KeyValue // name -> node number, expiring
	claim  uint64             // the revision of this node's name claim

	mu    sync.Mutex
	sched *scheduler.Scheduler // set by Attach; incoming messages go to it
	peers map[int]*peer        // the nodes heard from, by number

	stop chan struct{}
	done chan struct{}
}

// peer is another node, as its heartbeats tell.
type peer struct {
	name string
	seen time.Time
}

// Join connects to the cluster's NATS server, takes a node number and
// claims the node's name. The node is not yet delivering messages: Attach
// gives it the scheduler that receives them.
func Join(ctx context.Context, cfg Config) (*Node, error) {
	cfg = withDefaults(cfg)
	opts, err := connectOptions(cfg)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to %s: %w", cfg.URL, err)
	}
	n := &Node{cfg: cfg, nc: nc, name: cfg.Name, peers: map[int]*peer{}, stop: make(chan struct{}), done: make(chan struct{})}
	if err := n.register(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return n, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Cluster == "" {
		cfg.Cluster = "luarun"
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = host + "-" + strconv.Itoa(os.Getpid())
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.DownAfter <= 0 {
		cfg.DownAfter = DefaultDownAfter
	}
	return cfg
}

// connectOptions are the NATS options cfg asks for: credentials, TLS,
// and reconnecting for ever (a restarted server is waited for).
func connectOptions(cfg Config) ([]nats.Option, error) {
	opts := []nats.Option{nats.Name("luarun " + cfg.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	switch {
	case cfg.CredsFile != "":
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	case cfg.User != "":
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	case cfg.Token != "":
		opts = append(opts, nats.Token(cfg.Token))
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		if cfg.CertFile == "" || cfg.KeyFile == "" {
			return nil, errors.New("cluster: a client certificate needs both its certificate and key files")
		}
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	if cfg.CAFile != "" || cfg.CertFile != "" {
		opts = append(opts, nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	return opts, nil
}

// register takes a node number from the cluster's counter and claims the
// node's name.
func (n *Node) register(ctx context.Context) error {
	js, err := jetstream.New(n.nc)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	ids, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: n.cfg.Cluster + "_ids"})
	if err != nil {
		return fmt.Errorf("cluster: the node counter (does the NATS server run with JetStream, -js?): %w", err)
	}
	if n.number, err = takeNumber(ctx, ids); err != nil {
		return err
	}
	ttl := n.cfg.Heartbeat * time.Duration(n.cfg.DownAfter)
	n.names, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: n.cfg.Cluster + "_names", TTL: max(ttl, time.Second)})
	if err != nil {
		return fmt.Errorf("cluster: the node names: %w", err)
	}
	n.claim, err = n.names.Create(ctx, n.name, []byte(strconv.Itoa(n.number)))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("cluster: a node named %q is up already", n.name)
	}
	if err != nil {
		return fmt.Errorf("cluster: claim the name %q: %w", n.name, err)
	}
	return nil
}

// takeNumber increments the counter by compare-and-set and returns the
// number it took: no two nodes ever get the same (numbers wrap past
// scheduler.MaxNode, after that many nodes have joined).
func takeNumber(ctx context.Context, ids jetstream.KeyValue) (int, error) {
	for {
		e, err := ids.Get(ctx, "next")
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			if _, err := ids.Create(ctx, "next", []byte("1")); err == nil {
				return 1, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return 0, fmt.Errorf("cluster: take a node number: %w", err)
			}
			continue // another node created it first
		}
		if err != nil {
			return 0, fmt.Errorf("cluster: take a node number: %w", err)
		}
		last, _ := strconv.Atoi(string(e.Value()))
		next := last%scheduler.MaxNode + 1
		if _, err := ids.Update(ctx, "next", []byte(strconv.Itoa(next)), e.Revision()); err == nil {
			return next, nil
		}
		// another node took it between our read and write: read again
	}
}

// Number is this node's number (the node bits of its PIDs).
func (n *Node) Number() int { return n.number }

// Node is Number, for the scheduler's Relay.
func (n *Node) Node() int { return n.number }

// Name is this node's name.
func (n *Node) Name() string { return n.name }

func (n *Node) subject(number int) string {
	return n.cfg.Cluster + ".node." + strconv.Itoa(number)
}

// Attach starts delivering the messages sent to this node's processes to
// s, and the heartbeats. It is called once, by the runtime, before its
// first process starts.
func (n *Node) Attach(s *scheduler.Scheduler) error {
	n.mu.Lock()
	n.sched = s
	n.mu.Unlock()
	if _, err := n.nc.Subscribe(n.subject(n.number), n.deliver); err != nil {
		return fmt.Errorf("cluster: subscribe: %w", err)
	}
	if _, err := n.nc.Subscribe(n.cfg.Cluster+".heartbeat", n.heard); err != nil {
		return fmt.Errorf("cluster: subscribe to heartbeats: %w", err)
	}
	n.beat()
	go n.heartbeats()
	return nil
}

// Forward publishes msg for process to on its node: the scheduler's
// Relay. A node that is not up is an error.
func (n *Node) Forward(from, to scheduler.PID, msg any) error {
	node := to.Node()
	if !n.up(node) {
		return fmt.Errorf("node %d is not up", node)
	}
	buf := make([]byte, 0, 32)
	buf = binary.AppendUvarint(buf, uint64(from))
	buf = binary.AppendUvarint(buf, uint64(to))
	buf, err := payload.AppendWire(buf, msg)
	if err != nil {
		return err
	}
	return n.nc.Publish(n.subject(node), buf)
}

// deliver hands a message published for one of this node's processes to
// the scheduler (one goroutine per subscription: in order).
func (n *Node) deliver(m *nats.Msg) {
	from, k := binary.Uvarint(m.Data)
	if k <= 0 {
		return
	}
	to, k2 := binary.Uvarint(m.Data[k:])
	if k2 <= 0 {
		return
	}
	v, _, err := payload.UnmarshalWire(m.Data[k+k2:])
	if err != nil {
		return
	}
	n.mu.Lock()
	s := n.sched
	n.mu.Unlock()
	s.Send(scheduler.PID(from), scheduler.PID(to), v) // an ended process: dropped, as a local send to it
}

// heartbeats says this node is up every Heartbeat, refreshing its name's
// claim, until Close.
func (n *Node) heartbeats() {
	defer close(n.done)
	t := time.NewTicker(n.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.beat()
			ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Heartbeat)
			if rev, err := n.names.Update(ctx, n.name, []byte(strconv.Itoa(n.number)), n.claim); err == nil {
				n.claim = rev
			}
			cancel()
		}
	}
}

func (n *Node) beat() {
	n.nc.Publish(n.cfg.Cluster+".heartbeat", []byte(strconv.Itoa(n.number)+" "+n.name))
}

// heard notes a heartbeat; a node heard from for the first time hears
// this one's at once, so that nodes learn of each other without waiting
// a heartbeat.
func (n *Node) heard(m *nats.Msg) {
	var number int
	var name string
	if _, err := fmt.Sscanf(string(m.Data), "%d %s", &number, &name); err != nil || number == n.number {
		return
	}
	n.mu.Lock()
	p, known := n.peers[number]
	if !known {
		p = &peer{name: name}
		n.peers[number] = p
	}
	p.seen = time.Now()
	n.mu.Unlock()
	if !known {
		n.beat()
	}
}

// up reports whether node number is this one or was heard from lately.
func (n *Node) up(number int) bool {
	if number == n.number {
		return true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.peers[number]
	return p != nil && time.Since(p.seen) < n.cfg.Heartbeat*time.Duration(n.cfg.DownAfter)
}

// Nodes is the names of the nodes that are up, this one's included,
// sorted.
func (n *Node) Nodes() []string {
	names := []string{n.name}
	n.mu.Lock()
	for number, p := range n.peers {
		if time.Since(p.seen) < n.cfg.Heartbeat*time.Duration(n.cfg.DownAfter) && number != n.number {
			names = append(names, p.name)
		}
	}
	n.mu.Unlock()
	sort.Strings(names)
	return names
}

// Close leaves the cluster: the heartbeats stop, the name is released,
// and what was published is flushed before the connection closes.
func (n *Node) Close() error {
	select {
	case <-n.stop:
		return nil
	default:
	}
	close(n.stop)
	n.mu.Lock()
	attached := n.sched != nil
	n.mu.Unlock()
	if attached {
		<-n.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n.names.Delete(ctx, n.name, jetstream.LastRevision(n.claim))
	err := n.nc.FlushWithContext(ctx)
	n.nc.Close()
	return err
}
