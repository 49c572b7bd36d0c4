package cluster

// Names registered cluster-wide (process.register in a cluster).
//
// The names live in a JetStream key-value bucket, "<cluster>_registry":
// key the name (base64url, as keys take only a few characters), value
// the holder's PID. JetStream KV is what NATS offers for this: its Create
// succeeds for one client only, and Update is a compare-and-set on the
// entry's revision, so one process holds a name at a time however many
// nodes race for it, with no lock service of our own; and a watch on the
// bucket gives every node the whole registry as it changes.
//
//   - Register: the runtime registers the name in its scheduler first
//     (so the process is alive, and the scheduler tells us when it gives
//     the name up: ReleaseNames), then claims the key with Create. A key
//     held by a process whose node is down is taken over by Update at the
//     revision read; any other holder keeps it (ErrNameTaken).
//   - Release: when the holder ends or unregisters, the scheduler calls
//     ReleaseNames, which deletes the key at the revision this node wrote
//     (a later holder's entry is never deleted), in the background.
//   - Whereis reads the node's replica of the bucket, kept by the watch:
//     no round trip. A name registered on another node is seen once its
//     entry reached this node (the watch; milliseconds on a LAN). A holder
//     whose node is down is no holder: its names are free from the moment
//     its heartbeats stop, for lookups and for Register.
//   - With a cluster secret, a value is the PID and the MAC of the key and
//     the PID (auth.go): an entry a client without the secret wrote is no
//     holder (counted Forged when the watch brings it).

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/luarun/luarun/scheduler"
)

// registry is this node's side of the cluster's names.
type registry struct {
	kv     jetstream.KeyValue
	watch  jetstream.KeyWatcher
	sign   signer         // the node's
	forged *atomic.Uint64 // the node's count of forgeries

	mu      sync.Mutex
	replica map[string]scheduler.PID // every name of the cluster, from the watch
	held    map[string]heldName      // the names this node's processes hold
	pending sync.WaitGroup           // releases under way (Close waits)
}

type heldName struct {
	pid scheduler.PID
	rev uint64
}

func nameKey(name string) string { return base64.RawURLEncoding.EncodeToString([]byte(name)) }

// value is the entry of name held by pid: the PID, and with a secret its
// MAC.
func (r *registry) value(name string, pid scheduler.PID) []byte {
	v := strconv.FormatUint(uint64(pid), 10)
	if r.sign.on() {
		v += " " + r.sign.hexSum([]byte(nameKey(name)), []byte(v))
	}
	return []byte(v)
}

// holder reads an entry of the key of name: its PID, unless it does not
// verify.
func (r *registry) holder(key string, value []byte) (scheduler.PID, bool) {
	pidText, mac, _ := strings.Cut(string(value), " ")
	pid, err := strconv.ParseUint(pidText, 10, 64)
	if err != nil || !r.sign.verifyHex(mac, []byte(key), []byte(pidText)) {
		return 0, false
	}
	return scheduler.PID(pid), true
}

// openRegistry opens the names' bucket and fills the replica from it
// before Join returns, so a name registered before this node joined is
// found at once.
func (n *Node) openRegistry(ctx context.Context) error {
	kv, err := bucket(ctx, n.js, n.cfg.Cluster+"_registry", 0)
	if err != nil {
		return fmt.Errorf("cluster: the names' bucket: %w", err)
	}
	// not under ctx: a watch's subscription ends with its context, and
	// this one lasts as long as the node (Close stops it); ctx bounds
	// only the wait for the present entries
	w, err := kv.WatchAll(context.Background())
	if err != nil {
		return fmt.Errorf("cluster: watch the names: %w", err)
	}
	r := &n.reg
	r.kv, r.watch, r.sign, r.forged = kv, w, n.sign, &n.stats.forged
	r.replica, r.held = map[string]scheduler.PID{}, map[string]heldName{}
	for {
		select {
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return errors.New("cluster: the names' watch ended before it started")
			case e == nil: // the bucket's present entries are all in
				go r.follow(w)
				return nil
			}
			r.apply(e)
		case <-ctx.Done():
			w.Stop()
			return fmt.Errorf("cluster: read the names: %w", ctx.Err())
		}
	}
}

// follow applies w's updates until it stops (Close, or a new watch).
func (r *registry) follow(w jetstream.KeyWatcher) {
	for e := range w.Updates() {
		if e != nil {
			r.apply(e)
		}
	}
}

// bucket is the names' bucket (restoreRegistry may replace it).
func (r *registry) bucket() jetstream.KeyValue {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kv
}

// restoreRegistry puts the names of this node's processes back, after
// this node's own claim had vanished: a server that lost its JetStream
// store (or was away past the claim's TTL). The bucket is opened again
// (made if gone) and watched anew; the replica starts again from this
// node's names, and the others' come back as their nodes restore them.
func (n *Node) restoreRegistry() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := bucket(ctx, n.js, n.cfg.Cluster+"_registry", 0)
	if err != nil {
		n.logf("cluster: restore the names: %v", err)
		return
	}
	w, err := kv.WatchAll(context.Background())
	if err != nil {
		n.logf("cluster: restore the names: %v", err)
		return
	}
	r := &n.reg
	r.mu.Lock()
	old := r.watch
	r.kv, r.watch = kv, w
	r.replica = map[string]scheduler.PID{}
	held := make(map[string]heldName, len(r.held))
	for name, h := range r.held {
		held[name] = h
		r.replica[name] = h.pid
	}
	r.mu.Unlock()
	old.Stop()
	go r.follow(w)
	for name, h := range held {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // each its own: many names, a slow server
		rev, err := kv.Create(ctx, nameKey(name), r.value(name, h.pid))
		cancel()
		if errors.Is(err, jetstream.ErrKeyExists) {
			continue // taken meanwhile (or put back already): the watch says by whom
		}
		if err != nil {
			n.logf("cluster: restore the name %q: %v", name, err)
			continue
		}
		r.mu.Lock()
		cur, ok := r.held[name]
		if ok && cur.pid == h.pid {
			r.held[name] = heldName{h.pid, rev}
		}
		r.mu.Unlock()
		if !ok || cur.pid != h.pid { // released while it was put back: release it again
			n.deleteName(name, rev)
		}
	}
}

func (r *registry) apply(e jetstream.KeyValueEntry) {
	raw, err := base64.RawURLEncoding.DecodeString(e.Key())
	if err != nil {
		return // not a key of ours
	}
	name := string(raw)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		delete(r.replica, name)
		return
	}
	pid, ok := r.holder(e.Key(), e.Value())
	if !ok {
		r.forged.Add(1)
		delete(r.replica, name) // no holder: a forged entry replaced the last
		return
	}
	r.replica[name] = pid
}

// Whereis returns the process that holds name in the cluster, if its
// node is up.
func (n *Node) Whereis(name string) (scheduler.PID, bool) {
	n.reg.mu.Lock()
	pid, ok := n.reg.replica[name]
	n.reg.mu.Unlock()
	if !ok || !n.up(pid.Node()) {
		return 0, false
	}
	return pid, true
}

// Register gives process pid of this node the name in the whole
// cluster; the runtime registered it in its scheduler first (the
// scheduler's names are this node's part of the registry). It takes a
// round trip to the NATS server or a few: call it from a command, not a
// worker.
func (n *Node) Register(ctx context.Context, name string, pid scheduler.PID) error {
	rev, err := n.claimName(ctx, name, pid)
	if err != nil {
		if ctx.Err() != nil { // the server may have written the claim before the caller gave up
			n.dropClaim(name, pid)
		}
		return fmt.Errorf("register %q: %w", name, err)
	}
	return n.hold(name, pid, rev)
}

// hold records that pid holds name at revision rev of its key, after
// its claim.
func (n *Node) hold(name string, pid scheduler.PID, rev uint64) error {
	r := &n.reg
	r.mu.Lock()
	// a later claim of this node (a higher revision) stays: this one
	// came late, from a holder the scheduler has since let go (the same
	// holder's is its own, whatever the revision: a bucket made again
	// counts from 1)
	if cur, ok := r.held[name]; !ok || cur.pid == pid || cur.rev < rev {
		r.held[name] = heldName{pid, rev}
		r.replica[name] = pid
	}
	r.mu.Unlock()
	// A holder that ended (or unregistered) before held had the name was
	// released before there was anything to release: release it now.
	// (After held has it, ReleaseNames does; both is harmless.)
	if holder, ok := n.scheduler().Whereis(name); !ok || holder != pid {
		n.ReleaseNames(pid, []string{name})
		return fmt.Errorf("register %q: %w", name, scheduler.ErrNoProcess)
	}
	return nil
}

// claimName writes pid under name's key unless a live process of
// another node holds it, and returns the entry's revision.
func (n *Node) claimName(ctx context.Context, name string, pid scheduler.PID) (uint64, error) {
	key, val := nameKey(name), n.reg.value(name, pid)
	for range 5 { // each turn lost a race with another node's write
		kv := n.reg.bucket()
		rev, err := kv.Create(ctx, key, val)
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return rev, err
		}
		e, err := get(ctx, kv, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // released meanwhile
		}
		if err != nil {
			return 0, err
		}
		h, valid := n.reg.holder(key, e.Value())
		switch {
		case !valid:
			// written by a client without the secret: no holder, taken over below
		case h == pid:
			return e.Revision(), nil
		case h.Node() != n.number && n.up(h.Node()):
			return 0, fmt.Errorf("%w (by process %d)", scheduler.ErrNameTaken, h)
		case h.Node() == n.number:
			// a holder of this node: the scheduler decides. It gave the
			// name to pid (the holder's release has not come yet), or this
			// claim is late and the name is another's now
			if now, ok := n.scheduler().Whereis(name); !ok || now != pid {
				return 0, fmt.Errorf("%w (by process %d)", scheduler.ErrNameTaken, h)
			}
		}
		// A holder of a node that is down, or of this node whose
		// scheduler gave the name to pid: take it over.
		if rev, err := kv.Update(ctx, key, val, e.Revision()); err == nil {
			return rev, nil // taken over from a node that is down
		}
	}
	return 0, errors.New("the name changed hands too often to claim it")
}

// ReleaseNames deletes the keys of the names pid held, at the revisions
// this node wrote, in the background: scheduler.NameReleaser.
func (n *Node) ReleaseNames(pid scheduler.PID, names []string) {
	r := &n.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range names {
		h, ok := r.held[name]
		if !ok || h.pid != pid {
			continue
		}
		delete(r.held, name)
		if r.replica[name] == pid {
			delete(r.replica, name)
		}
		n.deleteNameLocked(name, h.rev)
	}
}

// checkNames looks up the keys of the names this node's processes hold
// and lets go of those that name another process now: another node took
// them over while it found this one down (a silence it alone saw; it
// resets this node when it hears it again: reset.go). The scheduler
// lets go of them too; their processes run on, unnamed, as Erlang's
// global keeps one holder when two partitions meet. A key that is gone
// is made again. In the background, a goroutine a name (Close waits).
func (n *Node) checkNames() {
	r := &n.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, h := range r.held {
		r.background(func(ctx context.Context, kv jetstream.KeyValue) { n.checkName(ctx, kv, name, h) })
	}
}

// checkName is checkNames' look at one name.
func (n *Node) checkName(ctx context.Context, kv jetstream.KeyValue, name string, h heldName) {
	mine := string(n.reg.value(name, h.pid))
	e, err := get(ctx, kv, nameKey(name))
	switch {
	case err == nil && string(e.Value()) == mine:
		return
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		if rev, err := kv.Create(ctx, nameKey(name), []byte(mine)); err == nil {
			n.remade(name, h, rev)
		}
		return
	case err != nil:
		n.logf("cluster: look up the name %q: %v", name, err)
		return
	}
	if _, valid := n.reg.holder(e.Key(), e.Value()); !valid { // a forgery: put back
		if rev, err := kv.Update(ctx, nameKey(name), []byte(mine), e.Revision()); err == nil {
			n.remade(name, h, rev)
		}
		return
	}
	r := &n.reg
	r.mu.Lock()
	cur, ok := r.held[name]
	if ok && cur == h {
		delete(r.held, name) // so that the scheduler's release deletes nothing
	}
	r.mu.Unlock()
	if !ok || cur != h {
		return // released or claimed again meanwhile
	}
	n.logf("cluster: the name %q was taken over by process %s while this node was taken for down: process %d lets go of it", name, e.Value(), h.pid)
	s := n.scheduler()
	s.UnregisterPID(name, h.pid)
}

// remade records that checkName wrote name's key again for h, at
// revision rev, unless it was released meanwhile: then it is released
// again.
func (n *Node) remade(name string, h heldName, rev uint64) {
	n.reg.mu.Lock()
	cur, ok := n.reg.held[name]
	if ok && cur == h {
		n.reg.held[name] = heldName{h.pid, rev}
	}
	n.reg.mu.Unlock()
	if !ok || cur != h {
		n.deleteName(name, rev)
	}
}

// deleteName deletes name's key if it is still at revision rev, in the
// background (Close waits).
func (n *Node) deleteName(name string, rev uint64) {
	n.reg.mu.Lock()
	defer n.reg.mu.Unlock()
	n.deleteNameLocked(name, rev)
}

// deleteNameLocked is deleteName under reg.mu.
func (n *Node) deleteNameLocked(name string, rev uint64) {
	n.reg.background(func(ctx context.Context, kv jetstream.KeyValue) {
		if err := kv.Delete(ctx, nameKey(name), jetstream.LastRevision(rev)); err != nil {
			n.logf("cluster: release the name %q: %v", name, err)
		}
	})
}

// background runs do with the bucket and 5 s in a goroutine of its own,
// which Close waits for (under mu).
func (r *registry) background(do func(ctx context.Context, kv jetstream.KeyValue)) {
	r.pending.Add(1)
	kv := r.kv
	go func() {
		defer r.pending.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		do(ctx, kv)
	}()
}

// dropClaim deletes name's key if it holds pid and this node does not
// hold it for pid: a claim whose caller gave up (its context ended)
// after the server wrote it, in the background.
func (n *Node) dropClaim(name string, pid scheduler.PID) {
	r := &n.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.held[name]; ok && h.pid == pid {
		return
	}
	r.background(func(ctx context.Context, kv jetstream.KeyValue) {
		e, err := get(ctx, kv, nameKey(name))
		if err == nil && string(e.Value()) == string(r.value(name, pid)) {
			kv.Delete(ctx, nameKey(name), jetstream.LastRevision(e.Revision()))
		}
	})
}

// scheduler is the attached scheduler.
func (n *Node) scheduler() *scheduler.Scheduler {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.sched
}
