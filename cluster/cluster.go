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
// two nodes get the same number only after scheduler.MaxNode (16,383)
// more have joined, and a PID of a node that went away does not name a
// process of the next ones. The counter lives as long as the server's
// JetStream store: an embedded server (StartServer) keeps it in a
// temporary directory for its own life, so restarting the node that
// embeds it starts a new cluster. A node also claims its number in the
// names' bucket, so that one taken from a counter that went back (a
// store lost) is skipped while its node lives; heartbeats carry each
// node's incarnation, and of two live nodes with one number the later
// leaves (auth.go). Node names are
// claimed in a second bucket whose keys expire (nameTTL): a node
// refreshes its claim with each heartbeat, so a name is free again a few
// seconds after its node was killed, and a node that joins under a name
// whose claim has not changed for DownAfter heartbeats takes it over
// (adoptSilentClaim). Every node publishes a heartbeat on
// "<cluster>.heartbeat" and keeps the nodes it heard from: a node is up
// from its first heartbeat until one of this node's heartbeats finds it
// silent for DownAfter heartbeats (and fires NodeDown), and again when it
// beats again.
//
// What cannot be delivered is counted (Node.Stats): a message whose
// process has ended (its sender was told "true", as a local send to a
// process that ends before reading is), a malformed one, and those NATS
// dropped because this node read too slowly.
//
// The NATS server must have JetStream enabled (nats-server -js);
// StartServer starts one in this process for trying a cluster on one
// machine and for tests.
package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/luarun/luarun/internal/nodelink"
	"github.com/luarun/luarun/scheduler"
)

// A Node is what a runtime needs of its node (luaproc.New asserts it).
var _ nodelink.Node = (*Node)(nil)

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
	// Token, or NKeySeedFile (a file holding a user nkey's seed)
	// authenticate to the server. None is ever quoted in an error.
	User, Password, CredsFile, Token, NKeySeedFile string
	// TLS: a CA file to trust, and a client certificate and key (for
	// servers that verify clients). A tls:// URL turns TLS on with the
	// system's roots.
	CAFile, CertFile, KeyFile string

	// Heartbeat is how often this node says it is up; a node not heard
	// from for DownAfter heartbeats is down. 0: DefaultHeartbeat, and
	// DefaultDownAfter.
	Heartbeat time.Duration
	DownAfter int

	// Secret, when set, is the cluster's secret (auth.go): every node of
	// the cluster must have the same. Without one, any client of the NATS
	// account can act as a node.
	Secret []byte

	// Logf, when set, hears of what goes wrong after Join: a heartbeat
	// conflict, a lost name claim, NATS errors. nil: silence.
	Logf func(format string, args ...any)
}

// Defaults of Config.
const (
	DefaultHeartbeat = 500 * time.Millisecond
	DefaultDownAfter = 4
)

// nameTTL is how long a name claim lasts unless its node refreshes it:
// the same for every node (the bucket's TTL is set by the node that makes
// it), so Heartbeat may be at most a third of it.
const nameTTL = 6 * time.Second

// Node is this runtime's place in a cluster. Join makes one; the runtime
// attaches its scheduler; Close leaves. It is a luaproc.ClusterNode
// (Options.Cluster), and the rest of what a runtime needs of its node:
// nodelink.Node, the contract internal to luarun.
type Node struct {
	cfg    Config
	nc     *nats.Conn
	number int
	name   string
	names  jetstream.KeyValue // name -> node number, expiring
	claim  uint64             // the revision of this node's name claim
	// numberClaim: the revision of its number's claim (numberKey)
	numberClaim uint64

	mu    sync.RWMutex
	sched *scheduler.Scheduler // set by Attach; incoming messages go to it
	spawn SpawnFunc            // set by ServeSpawns (spawn.go)
	peers map[int]*peer        // the nodes heard from, by number
	// live: node number → up (heard from, and not found silent by
	// noticeDown since): written under mu by heard and noticeDown, read
	// without it by every send (up)
	live [scheduler.MaxNode + 1]atomic.Bool
	// cameUp is closed (and replaced, under mu) by heard whenever a node
	// comes up: awaitPeer waits on it
	cameUp chan struct{}
	subs   []*nats.Subscription // Attach's; Close unsubscribes

	reg   registry // the cluster's names (names.go)
	stats nodeStats
	out   outbound  // what this node sends: numbers, batches (batches.go)
	taken []sending // the flusher's: the batches it publishes (batches.go)
	in    inbound   // what it received from each node: the subscription's alone
	js    jetstream.JetStream

	incarnation uint64          // this node's (auth.go)
	beats       atomic.Uint64   // the heartbeats it published
	spawnSeq    atomic.Uint64   // the spawn requests it sent
	spawnsSeen  map[int]*window // the spawn requests taken, by sender (under mu)
	sign        signer          // the cluster secret's MACs (auth.go)
	flushHash   hash.Hash       // the flusher's HMAC
	deliverHash hash.Hash       // the delivering subscription's HMAC

	beating   bool          // the heartbeat goroutine runs (Attach succeeded); under mu
	stop      chan struct{} // closed by Close
	done      chan struct{} // closed when the heartbeat goroutine returns
	closeOnce sync.Once
	closeErr  error
}

// Stats counts what this node received and could not deliver.
type Stats struct {
	Delivered     uint64 // messages handed to a process of this node
	Undeliverable uint64 // messages for a process of this node that has ended or never was
	MailboxFull   uint64 // messages dropped because their process's mailbox was full (--max-mailbox)
	Malformed     uint64 // messages that could not be read
	SlowDropped   uint64 // messages NATS dropped because this node read too slowly
	// Lost: messages another node numbered for this one that never came
	// (a gap in its sequence: dropped by a server that went away, say),
	// seen when a later message comes. Duplicates: messages that came
	// twice (NATS does not redeliver; counted and dropped if it did).
	Lost, Duplicates uint64
	// Signals: links', monitors' and kills' signals received (not
	// messages: not in Delivered).
	Signals uint64
	// Forged: batches, spawn requests, heartbeats and names dropped
	// because their MAC did not verify (or a frame's source was not its
	// batch's sender): auth.go. Stale: batches for another incarnation of
	// this node, or from an older incarnation of their sender, and
	// replayed spawn requests.
	Forged, Stale uint64

	// Published: the NATS messages this node published to other nodes,
	// each a batch of one or more messages and signals (batches.go).
	// Unsent: the messages and signals in batches NATS refused to
	// publish (the connection closed, or its buffer was full while the
	// server was away); their node counts them Lost.
	Published, Unsent uint64
}

// nodeStats: written by the subscription's goroutine (and NATS's error
// callback), read by Stats from any goroutine.
type nodeStats struct {
	delivered, undeliverable, malformed, slowDropped atomic.Uint64
	lost, duplicates, signals                        atomic.Uint64
	forged, stale, mailboxFull                       atomic.Uint64
	published, unsent                                atomic.Uint64 // the flusher's (batches.go)
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	return Stats{
		Delivered: n.stats.delivered.Load(), Undeliverable: n.stats.undeliverable.Load(),
		Malformed: n.stats.malformed.Load(), SlowDropped: n.stats.slowDropped.Load(),
		Lost: n.stats.lost.Load(), Duplicates: n.stats.duplicates.Load(),
		Signals: n.stats.signals.Load(), Forged: n.stats.forged.Load(), Stale: n.stats.stale.Load(),
		MailboxFull: n.stats.mailboxFull.Load(),
		Published:   n.stats.published.Load(), Unsent: n.stats.unsent.Load(),
	}
}

func (n *Node) logf(format string, args ...any) {
	if n.cfg.Logf != nil {
		n.cfg.Logf(format, args...)
	}
}

// peer is another node, as its heartbeats tell.
type peer struct {
	name string
	// incarnation: the one heard (a later one replaces it); beat: the
	// number of its last heartbeat
	incarnation, beat uint64
	seen              time.Time
	down              bool // its heartbeats stopped and NodeDown was called; until it beats again (live is !down)
	// The resets this node sent it (reset.go): resetsGoing are being
	// numbered; resetSeq is the latest one's number, ackedUpTo the last
	// number it said it received. Its monitor and link requests are
	// refused while it is down, a reset is going, or resetSeq > ackedUpTo.
	resetsGoing         int
	resetSeq, ackedUpTo uint64
}

// Join connects to the cluster's NATS server, takes a node number and
// claims the node's name. The node is not yet delivering messages: Attach
// gives it the scheduler that receives them.
func Join(ctx context.Context, cfg Config) (*Node, error) {
	cfg = withDefaults(cfg)
	if cfg.Heartbeat > nameTTL/3 {
		return nil, fmt.Errorf("cluster: a heartbeat of %v is too slow to keep a name (at most %v)", cfg.Heartbeat, nameTTL/3)
	}
	if err := checkName(cfg.Name); err != nil {
		return nil, err
	}
	opts, err := connectOptions(cfg)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, name: cfg.Name, peers: map[int]*peer{}, spawnsSeen: map[int]*window{}, cameUp: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	n.incarnation = newIncarnation()
	n.sign = signer{secret: cfg.Secret}
	if n.sign.on() {
		n.flushHash, n.deliverHash = n.sign.newHash(), n.sign.newHash()
	} else {
		n.logf("cluster: no cluster secret (--cluster-secret-file, $LUARUN_CLUSTER_SECRET): any client of the NATS account controls every node")
	}
	opts = append(opts, nats.ErrorHandler(n.natsError))
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to %s: %w", redacted(cfg.URL), redactedErr(err, cfg))
	}
	n.nc = nc
	n.out.init(int(nc.MaxPayload()), n.sign.size()+batchHeader)
	if err := n.register(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	go n.flushes()
	return n, nil
}

// checkName refuses a node name that is not a key of NATS's key-value
// buckets (where it is claimed): letters, digits, '-' and '_', in words
// joined by single dots.
func checkName(name string) error {
	for _, word := range strings.Split(name, ".") {
		if word == "" {
			return fmt.Errorf("cluster: the node name %q: no dot may start or end it, or follow another", name)
		}
		for _, r := range word {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("cluster: the node name %q: %q is not allowed (letters, digits, '-', '_' and '.' are)", name, r)
			}
		}
	}
	return nil
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
	case cfg.NKeySeedFile != "":
		o, err := nats.NkeyOptionFromSeed(cfg.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("cluster: the nkey seed in %s cannot be read", cfg.NKeySeedFile) // not err: it may quote the seed
		}
		opts = append(opts, o)
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

// redacted is urls (comma-separated) without the passwords or tokens
// they may hold.
func redacted(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("xxxxx")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// redactedErr is err, with any credential of cfg that its text quotes
// replaced.
func redactedErr(err error, cfg Config) error {
	text := err.Error()
	for _, secret := range []string{cfg.Password, cfg.Token} {
		if secret != "" && strings.Contains(text, secret) {
			text = strings.ReplaceAll(text, secret, "xxxxx")
		}
	}
	if text == err.Error() {
		return err
	}
	return errors.New(text)
}

// natsError counts the messages NATS dropped for a slow subscription and
// logs the rest.
func (n *Node) natsError(_ *nats.Conn, sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) && sub != nil {
		if dropped, derr := sub.Dropped(); derr == nil {
			n.stats.slowDropped.Store(uint64(dropped))
		}
	}
	n.logf("cluster: %v", err)
}

// register claims the node's name, then takes a node number from the
// cluster's counter (a name already up costs no number).
func (n *Node) register(ctx context.Context) error {
	js, err := jetstream.New(n.nc)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	n.js = js
	if n.names, err = bucket(ctx, js, n.cfg.Cluster+"_names", nameTTL); err != nil {
		return fmt.Errorf("cluster: the node names (does the NATS server run with JetStream, -js?): %w", err)
	}
	n.claim, err = n.names.Create(ctx, n.name, []byte("0"))
	if errors.Is(err, jetstream.ErrKeyExists) {
		n.claim, err = n.adoptSilentClaim(ctx)
	}
	if err != nil {
		return fmt.Errorf("cluster: claim the name %q: %w", n.name, err)
	}
	ids, err := bucket(ctx, js, n.cfg.Cluster+"_ids", 0)
	if err != nil {
		err = fmt.Errorf("open the bucket %s_ids: %w", n.cfg.Cluster, err)
	} else {
		err = n.takeFreeNumber(ctx, ids)
	}
	if err == nil {
		n.claim, err = n.names.Update(ctx, n.name, []byte(strconv.Itoa(n.number)), n.claim)
	}
	if err != nil {
		n.names.Delete(ctx, n.name, jetstream.LastRevision(n.claim))
		return fmt.Errorf("cluster: take a node number: %w", err)
	}
	if err := n.openRegistry(ctx); err != nil {
		n.names.Delete(ctx, n.name, jetstream.LastRevision(n.claim))
		return err
	}
	return nil
}

// adoptSilentClaim takes over the claim of this node's name when the
// node that holds it is silent: a node killed (kill -9) leaves its claim
// until nameTTL, and a node restarted under its name should not wait for
// it. A live node refreshes its claim every heartbeat; one whose claim
// does not change for DownAfter heartbeats (when every node takes it for
// down) is silent, and the claim is adopted by compare-and-set on the
// revision seen, so that of two nodes adopting one claim, one wins, and
// a refresh that came meanwhile wins over both. A claim that changes is
// a live node's: the name is refused; one that is deleted is free, and
// is made again.
func (n *Node) adoptSilentClaim(ctx context.Context) (uint64, error) {
	upAlready := fmt.Errorf("cluster: a node named %q is up already", n.name)
	e, err := get(ctx, n.names, n.name)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return n.names.Create(ctx, n.name, []byte("0")) // released meanwhile
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: read the claim of %q: %w", n.name, err)
	}
	wctx, stop := context.WithCancel(ctx) // the watch's goroutine ends with it
	defer stop()
	w, err := n.names.Watch(wctx, n.name, jetstream.UpdatesOnly())
	if err != nil {
		return 0, fmt.Errorf("cluster: watch the claim of %q: %w", n.name, err)
	}
	defer w.Stop()
	silent := time.NewTimer(n.cfg.Heartbeat * time.Duration(n.cfg.DownAfter))
	defer silent.Stop()
	for {
		select {
		case u := <-w.Updates():
			switch {
			case u == nil || u.Revision() <= e.Revision():
			case u.Operation() != jetstream.KeyValuePut:
				return n.names.Create(ctx, n.name, []byte("0"))
			default:
				return 0, upAlready
			}
		case <-silent.C:
			rev, err := n.names.Update(ctx, n.name, []byte("0"), e.Revision())
			if err != nil {
				return 0, upAlready
			}
			n.logf("cluster: the name %q was claimed by node %s, silent for %d heartbeats: taken over", n.name, e.Value(), n.cfg.DownAfter)
			return rev, nil
		case <-ctx.Done():
			return 0, fmt.Errorf("cluster: claim the name %q: %w", n.name, ctx.Err())
		}
	}
}

// maxNumberTries bounds how many numbers a joining node takes from the
// counter before it gives up finding one that no live node claims.
const maxNumberTries = 100

// takeFreeNumber takes numbers from the counter until one is not
// claimed by a live node (numberKey, in the names' bucket, renewed with
// the name's claim): after a server lost its store, the counter starts
// again while the nodes that hold its first numbers live on and put
// their claims back. (A node that joins in the moment before they did
// is told by their heartbeats, and leaves: numberTaken.)
func (n *Node) takeFreeNumber(ctx context.Context, ids jetstream.KeyValue) error {
	for range maxNumberTries {
		number, err := takeNumber(ctx, ids)
		if err != nil {
			return err
		}
		rev, err := n.names.Create(ctx, numberKey(number), n.numberValue())
		if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			err = fmt.Errorf("claim number %d: %w", number, err)
		}
		if errors.Is(err, jetstream.ErrKeyExists) {
			n.logf("cluster: node number %d is held by a live node (was the counter reset?): taking another", number)
			continue
		}
		if err != nil {
			return err
		}
		n.number, n.numberClaim = number, rev
		return nil
	}
	return fmt.Errorf("the %d numbers taken were all held by live nodes", maxNumberTries)
}

// numberKey is the key of node number's claim in the names' bucket: "="
// is in no node name (checkName).
func numberKey(number int) string { return "=" + strconv.Itoa(number) }

// numberValue is this node's number claim's value: its incarnation.
func (n *Node) numberValue() []byte { return []byte(strconv.FormatUint(n.incarnation, 10)) }

// bucket opens the key-value bucket, making it (with ttl) if it is not
// there: a bucket made by another node keeps that node's settings. Its
// requests are repeated when unanswered (retry.go).
func bucket(ctx context.Context, js jetstream.JetStream, name string, ttl time.Duration) (jetstream.KeyValue, error) {
	return repeated(ctx, func(ctx context.Context) (jetstream.KeyValue, error) {
		kv, err := js.KeyValue(ctx, name)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, TTL: ttl})
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				// made meanwhile by another node: the create says so as
				// ErrBucketExists, or (a server of 2.9) "subjects overlap
				// with an existing stream"
				if made, err2 := js.KeyValue(ctx, name); err2 == nil {
					kv, err = made, nil
				}
			}
		}
		return kv, err
	})
}

// takeNumber increments the counter by compare-and-set and returns the
// number it took: two nodes get the same only when scheduler.MaxNode
// more have joined between them (the numbers wrap). Only a lost race
// (another node wrote the counter between our read and our write) is
// tried again; any other error ends the take, named with its step, and
// a deadline reached while retrying says how many races were lost.
func takeNumber(ctx context.Context, ids jetstream.KeyValue) (int, error) {
	for lost := 0; ; lost++ {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("the counter (%d races lost to other joining nodes): %w", lost, err)
		}
		e, err := get(ctx, ids, "next")
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			if _, err := ids.Create(ctx, "next", []byte("1")); err == nil {
				return 1, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return 0, fmt.Errorf("create the counter: %w", err)
			}
			continue // another node created it first
		}
		if err != nil {
			return 0, fmt.Errorf("read the counter: %w", err)
		}
		last, _ := strconv.Atoi(string(e.Value()))
		next := last%scheduler.MaxNode + 1
		_, err = ids.Update(ctx, "next", []byte(strconv.Itoa(next)), e.Revision())
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, fmt.Errorf("write the counter (revision %d): %w", e.Revision(), err)
		}
		// another node took it between our read and write: read again
	}
}

// Node is this node's number (the node bits of its PIDs): the
// scheduler's Relay.
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
	defer n.mu.Unlock()
	if n.sched != nil {
		return errors.New("cluster: the node is attached already")
	}
	n.sched = s // before the subscriptions: deliver reads it
	for _, sub := range []struct {
		subject string
		handle  nats.MsgHandler
	}{{n.subject(n.number), n.deliver}, {n.cfg.Cluster + ".heartbeat", n.heard}, {n.spawnSubject(n.number), n.spawned}} {
		sn, err := n.nc.Subscribe(sub.subject, sub.handle)
		if err != nil {
			n.unsubscribe()
			n.sched = nil
			return fmt.Errorf("cluster: subscribe to %s: %w", sub.subject, err)
		}
		// no bound on what waits to be delivered, as a local mailbox has
		// none unless --max-mailbox: NATS would drop past its default
		sn.SetPendingLimits(-1, -1)
		n.subs = append(n.subs, sn)
	}
	// the server has the subscriptions when Attach returns: a message
	// published after it reaches this node
	if err := n.nc.FlushTimeout(10 * time.Second); err != nil {
		n.unsubscribe()
		n.sched = nil
		return fmt.Errorf("cluster: subscribe: %w", err)
	}
	n.beating = true
	n.beat()
	go n.heartbeats()
	return nil
}

// unsubscribe ends Attach's subscriptions (under mu).
func (n *Node) unsubscribe() {
	for _, sub := range n.subs {
		sub.Unsubscribe()
	}
	n.subs = nil
}

// heartbeats says this node is up every Heartbeat and notices the nodes
// that stopped, until Close; the claims are refreshed beside it
// (keepClaims), so that a slow NATS server does not slow the heartbeats.
func (n *Node) heartbeats() {
	defer close(n.done)
	claims := make(chan struct{})
	go func() {
		defer close(claims)
		n.keepClaims()
	}()
	t := time.NewTicker(n.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			<-claims // the claim is the claims goroutine's until then
			return
		case <-t.C:
			n.beat()
			n.out.addTicks(n.number)
			n.noticeDown()
		}
	}
}

// keepClaims refreshes the name's claim every Heartbeat until Close.
func (n *Node) keepClaims() {
	t := time.NewTicker(n.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.renewClaim()
		}
	}
}

// renewClaim refreshes the name's claim. If the update fails (it timed
// out but was applied, the key expired while the server was away, or a
// restarted server lost its JetStream store), the bucket is opened again
// (made, if it is gone) and the key read: a claim that is still this
// node's is adopted, a missing one made again — and then the names of
// this node's processes are put back too (restoreRegistry). A claim that
// is another node's now was taken over (adoptSilentClaim: this node was
// silent for DownAfter heartbeats, stopped or cut off, and every node
// took it for down): the name is that node's, and this one leaves the
// cluster, as a node whose number is taken does (numberTaken).
func (n *Node) renewClaim() {
	ctx, cancel := context.WithTimeout(context.Background(), nameTTL/3)
	defer cancel()
	defer n.renewNumber(ctx)
	mine := []byte(strconv.Itoa(n.number))
	rev, err := n.names.Update(ctx, n.name, mine, n.claim)
	if err == nil {
		n.claim = rev
		return
	}
	names, err := bucket(ctx, n.js, n.cfg.Cluster+"_names", nameTTL)
	if err != nil {
		n.logf("cluster: renew the claim of %q: %v", n.name, err)
		return
	}
	n.names = names
	e, err := get(ctx, names, n.name)
	switch {
	case err == nil && string(e.Value()) == string(mine):
		n.claim = e.Revision()
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		if rev, err := names.Create(ctx, n.name, mine); err == nil {
			n.claim = rev
			n.restoreRegistry()
		}
	case err == nil:
		n.logf("cluster: the name %q is claimed by node %s now, not by this node (%d): this node leaves the cluster", n.name, e.Value(), n.number)
		go n.Close()
	default:
		n.logf("cluster: renew the claim of %q: %v", n.name, err)
	}
}

// beat publishes this node's heartbeat: "number name incarnation beat
// state", state "up", or "bye" when it leaves (Close), then, with a
// secret, the MAC of that text.
func (n *Node) beat() { n.publishBeat("up") }

// renewNumber refreshes the claim of this node's number, as renewClaim
// the name's: a claim that vanished (a server that lost its store) is
// made again; one that another incarnation holds is logged (the
// heartbeats decide which node gives way: numberTaken).
func (n *Node) renewNumber(ctx context.Context) {
	key, mine := numberKey(n.number), n.numberValue()
	rev, err := n.names.Update(ctx, key, mine, n.numberClaim)
	if err == nil {
		n.numberClaim = rev
		return
	}
	e, err := get(ctx, n.names, key)
	switch {
	case err == nil && string(e.Value()) == string(mine):
		n.numberClaim = e.Revision()
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		if rev, err := n.names.Create(ctx, key, mine); err == nil {
			n.numberClaim = rev
		}
	case err == nil:
		n.logf("cluster: this node's number %d is claimed by another incarnation (%s)", n.number, e.Value())
	default:
		n.logf("cluster: renew the claim of node number %d: %v", n.number, err)
	}
}

func (n *Node) publishBeat(state string) {
	subject := n.cfg.Cluster + ".heartbeat"
	text := fmt.Sprintf("%d %s %d %d %s", n.number, n.name, n.incarnation, n.beats.Add(1), state)
	if n.sign.on() {
		text += " " + n.sign.hexSum([]byte(subject), []byte(text))
	}
	n.nc.Publish(subject, []byte(text))
}

// heartbeat is a heartbeat as read.
type heartbeat struct {
	number      int
	name        string
	incarnation uint64
	beat        uint64
	bye         bool
}

// readBeat reads and verifies a heartbeat, counting a forged one.
func (n *Node) readBeat(m *nats.Msg) (hb heartbeat, ok bool) {
	fields := strings.Fields(string(m.Data))
	if len(fields) < 5 {
		return hb, false
	}
	if n.sign.on() {
		text := strings.Join(fields[:5], " ")
		if len(fields) != 6 || !n.sign.verifyHex(fields[5], []byte(m.Subject), []byte(text)) {
			n.stats.forged.Add(1)
			return hb, false
		}
	}
	var err1, err2, err3 error
	hb.number, err1 = strconv.Atoi(fields[0])
	hb.incarnation, err2 = strconv.ParseUint(fields[2], 10, 64)
	hb.beat, err3 = strconv.ParseUint(fields[3], 10, 64)
	hb.name, hb.bye = fields[1], fields[4] == "bye"
	if err1 != nil || err2 != nil || err3 != nil || hb.number < 0 || hb.number > scheduler.MaxNode {
		return hb, false
	}
	return hb, true
}

// heard notes a heartbeat; a node heard from for the first time hears
// this one's at once, so that nodes learn of each other without waiting
// a heartbeat. A later incarnation of a node number is a new node: the
// old one's relations fire with noconnection (its links, monitors) as
// if it had gone down. A "bye" takes the node down at once.
func (n *Node) heard(m *nats.Msg) {
	hb, ok := n.readBeat(m)
	if !ok {
		return
	}
	if hb.number == n.number {
		if hb.incarnation != n.incarnation {
			n.numberTaken(hb)
		}
		return
	}
	n.mu.Lock()
	p, known := n.peers[hb.number]
	if !known {
		p = &peer{name: hb.name, incarnation: hb.incarnation}
		n.peers[hb.number] = p
	}
	if hb.incarnation < p.incarnation || hb.incarnation == p.incarnation && hb.beat <= p.beat {
		n.mu.Unlock()
		return // an older node of that number, or a beat that came late (or again)
	}
	reborn := hb.incarnation > p.incarnation
	if reborn {
		p.name, p.incarnation, p.resetSeq, p.ackedUpTo = hb.name, hb.incarnation, 0, 0
	}
	p.beat = hb.beat
	wasDown := p.down
	p.seen = time.Now()
	n.mu.Unlock()
	n.out.learn(hb.number, hb.incarnation)
	switch {
	case hb.bye:
		n.takeDown(hb.number, "it left")
		return
	case reborn && !wasDown:
		n.logf("cluster: node %d is %q of another incarnation now: the old one's links and monitors fire with noconnection", hb.number, hb.name)
		n.takeDown(hb.number, "another incarnation took its number")
		wasDown = true // it is, now: the new one is up below
	}
	if wasDown {
		// it may not have seen this node go quiet: the reset goes before
		// anything this node sends it from now on, and it stays down (its
		// requests refused, sends to it refused) until the reset has its
		// number (reset.go)
		n.logf("cluster: node %q (%d) is up", hb.name, hb.number)
		n.sendReset(hb.number, 0) // 0: the received numbers are the delivering goroutine's
		n.mu.Lock()
		p.down = false
		n.mu.Unlock()
	}
	n.live[hb.number].Store(true)
	if wasDown || !known {
		n.mu.Lock()
		close(n.cameUp) // after live: a waiter that wakes finds it up
		n.cameUp = make(chan struct{})
		n.mu.Unlock()
	}
	if !known {
		n.beat()
	}
}

// awaitPeer waits until node number, of incarnation inc or a later one,
// is up, for at most DownAfter heartbeats, and reports whether it is. A
// spawn request can come before its sender's first heartbeat has been
// read: the sender published the beat first, but NATS hands each
// subscription its messages on a goroutine of its own, so the request
// may be read first — and the new process's first send to its requester
// would find that node not up.
func (n *Node) awaitPeer(number int, inc uint64) bool {
	timeout := time.NewTimer(n.cfg.Heartbeat * time.Duration(n.cfg.DownAfter))
	defer timeout.Stop()
	for {
		n.mu.RLock()
		p := n.peers[number]
		ok := number == n.number || p != nil && !p.down && p.incarnation >= inc && n.up(number)
		wait := n.cameUp
		n.mu.RUnlock()
		if ok {
			return true
		}
		select {
		case <-wait:
		case <-timeout.C:
			return false
		case <-n.stop:
			return false
		}
	}
}

// numberTaken is a heartbeat of another incarnation with this node's
// number: two live nodes hold one number (a NATS server lost its store
// and its counter began again). The later incarnation gives way: if it
// is this one, it leaves the cluster (its PIDs would collide); see
// claimNumber for how a joining node avoids this.
func (n *Node) numberTaken(hb heartbeat) {
	if hb.incarnation > n.incarnation {
		n.logf("cluster: node %q (a later incarnation) has this node's number %d: it gives way", hb.name, hb.number)
		return
	}
	n.logf("cluster: node %q (an earlier incarnation) holds this node's number %d: this node leaves the cluster", hb.name, hb.number)
	go n.Close()
}

// noticeDown tells the scheduler of each node that stopped beating since
// the last look: its monitors and links on that node's processes fire
// with noconnection (scheduler.NodeDown).
func (n *Node) noticeDown() {
	var gone []int
	n.mu.Lock()
	for number, p := range n.peers {
		if !p.down && time.Since(p.seen) >= n.cfg.Heartbeat*time.Duration(n.cfg.DownAfter) {
			n.markDown(number, p)
			gone = append(gone, number)
			n.logf("cluster: node %q (%d) is down: no heartbeat for %v", p.name, number, time.Since(p.seen).Round(time.Millisecond))
		}
	}
	s := n.sched
	n.mu.Unlock()
	for _, number := range gone {
		s.NodeDown(number)
		n.out.resetting(number, -1)
	}
}

// markDown marks node number down (under mu): sends to it fail from now,
// and its monitor and link requests are refused until its NodeDown is
// done (the caller's, after it lets go of mu).
func (n *Node) markDown(number int, p *peer) {
	p.down = true
	n.live[number].Store(false)
	n.out.resetting(number, +1) // until its NodeDown is done, though it beat meanwhile (reset.go)
}

// takeDown takes node number down at once (it said bye, or another
// incarnation took its number), if it is not down already.
func (n *Node) takeDown(number int, why string) {
	n.mu.Lock()
	p := n.peers[number]
	if p == nil || p.down {
		n.mu.Unlock()
		return
	}
	n.markDown(number, p)
	s := n.sched
	n.mu.Unlock()
	n.logf("cluster: node %q (%d) is down: %s", p.name, number, why)
	if s != nil {
		s.NodeDown(number)
	}
	n.out.resetting(number, -1)
}

// up reports whether node number is this one or is up: heard from, and
// not found silent for DownAfter heartbeats by noticeDown since — the
// look that fires NodeDown, so sends to a node fail from the moment its
// monitors fire. Every send asks: one atomic load.
func (n *Node) up(number int) bool {
	return number == n.number || (number >= 0 && number <= scheduler.MaxNode && n.live[number].Load())
}

// Nodes is the names of the nodes that are up, this one's included,
// sorted.
func (n *Node) Nodes() []string {
	names := []string{n.name}
	n.mu.RLock()
	for _, p := range n.peers { // never this node: heard skips its own beats
		if !p.down {
			names = append(names, p.name)
		}
	}
	n.mu.RUnlock()
	sort.Strings(names)
	return names
}

// Close leaves the cluster: the heartbeats stop, the subscriptions end,
// the name is released, and what was published is flushed before the
// connection closes. Closing again returns the first Close's result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.out.close() // before stop: the flusher's last round takes all there is
		close(n.stop)
		n.mu.Lock()
		beating := n.beating
		n.unsubscribe()
		n.mu.Unlock()
		if beating {
			<-n.done             // the claim is the heartbeat goroutine's until then
			n.publishBeat("bye") // the others take it down at once
		}
		n.reg.pending.Wait() // the names of processes that ended are released
		n.reg.mu.Lock()
		n.reg.watch.Stop()
		n.reg.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n.names.Delete(ctx, n.name, jetstream.LastRevision(n.claim))
		n.names.Delete(ctx, numberKey(n.number), jetstream.LastRevision(n.numberClaim))
		<-n.out.flushed
		n.closeErr = n.nc.FlushWithContext(ctx)
		n.nc.Close()
	})
	return n.closeErr
}
