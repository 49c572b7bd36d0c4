package cluster

// A cluster only its members can use (auth.go): a plain NATS client of
// the account, without the cluster's secret, forging spawn requests,
// messages, kills, resets, heartbeats and a high sequence number, or
// replaying what it overheard, gets nothing done, and each attempt is
// counted; without a secret the same client runs code on a node.

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/internal/nodelink"
	"github.com/luarun/luarun/scheduler"
)

// rawFrame is one frame of v (as a node appends it), after its length.
func rawFrame(t *testing.T, f frame, v any) []byte {
	t.Helper()
	buf := appendFrame(make([]byte, lengthBytes), f)
	var err error
	if f.kind != kindTick {
		buf, err = appendBody(buf, v)
		require.NoError(t, err)
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-lengthBytes))
	return buf
}

// spawnCounter is a node's spawn function that counts the requests it
// was asked to run.
func spawnCounter(calls *atomic.Int64) SpawnFunc {
	return func(nodelink.SpawnRequest) (scheduler.PID, error) {
		calls.Add(1)
		return scheduler.NodePID(1, 1), nil
	}
}

// forgedSpawn is a well-formed spawn request from node from to node to,
// signed with secret (nil: unsigned), as a client that knows both
// nodes' numbers and incarnations (their heartbeats say them) makes it.
func forgedSpawn(t *testing.T, from, to *Node, secret []byte) []byte {
	t.Helper()
	forger := &Node{cfg: from.cfg, number: from.number, incarnation: from.incarnation, sign: signer{secret: secret}}
	forger.spawnSeq.Store(1 << 40) // far ahead: a replay window cannot take it for old
	req, err := forger.spawnRequest(to.number, to.incarnation, []any{"evil.lua", "os.execute('id')", "main", []any{}, []any{"os", "exec"}, int64(0)})
	require.NoError(t, err)
	return req
}

// TestWithoutASecretAnyClientSpawns: the attack works on a cluster
// without a secret (what the warning says), so the test below has teeth.
func TestWithoutASecretAnyClientSpawns(t *testing.T) {
	srv := startServer(t)
	a, b := join(t, srv, "a"), join(t, srv, "b")
	var calls atomic.Int64
	b.node.ServeSpawns(spawnCounter(&calls))
	raw := rawConnTo(t, srv)
	_, err := raw.Request(b.node.spawnSubject(b.node.number), forgedSpawn(t, a.node, b.node, nil), 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(1), calls.Load(), "the unsigned request ran")
}

// TestForgedTrafficGetsNothingDone: with a secret, nothing a client
// without it sends is acted on, each piece is counted Forged, and the
// real traffic between the nodes goes on: a forged high sequence number
// poisons nothing. A replay of what it overheard is dropped too.
func TestForgedTrafficGetsNothingDone(t *testing.T) {
	srv := startServer(t)
	secret := []byte("the cluster's secret")
	// DownAfter 100 beats (10 s): a loaded machine's stall must not take
	// a node down and up again, whose resets would count as Signals
	a := joinWith(t, srv, Config{Name: "a", Secret: secret, DownAfter: 100})
	b := joinWith(t, srv, Config{Name: "b", Secret: secret, DownAfter: 100})
	waitUp(t, []string{"a", "b"}, a, b)
	var calls atomic.Int64
	b.node.ServeSpawns(spawnCounter(&calls))
	k := &sink{last: "last", done: make(chan struct{})}
	hk, err := b.sched.Submit(k, "main", nil)
	require.NoError(t, err)
	raw := rawConnTo(t, srv)
	wrong := []byte("a guess")
	an, bn := a.node, b.node
	forged := func(want uint64) {
		t.Helper()
		waitFor(t, "the forgeries are counted", time.Minute, func() bool { return bn.Stats().Forged >= want })
	}

	// spawn requests: unsigned, and signed with a wrong secret
	for i, secret := range [][]byte{nil, wrong} {
		_, err := raw.Request(bn.spawnSubject(bn.number), forgedSpawn(t, an, bn, secret), 200*time.Millisecond)
		assert.ErrorIs(t, err, nats.ErrTimeout, "no answer")
		forged(uint64(i + 1))
	}
	assert.Zero(t, calls.Load(), "no forged request ran")

	// a message from a's process, a kill, a reset and a frame with a high
	// number, each in a batch claiming to be a's
	from := scheduler.NodePID(an.number, 1)
	for _, f := range [][]byte{
		rawFrame(t, frame{an.number, 1, kindMessage, from, hk.PID()}, "forged"),
		rawFrame(t, frame{an.number, 2, kindSignal, from, hk.PID()}, scheduler.Signal{Kind: scheduler.SignalKill, From: from, To: hk.PID(), Reason: scheduler.ErrShutdown}),
		rawFrame(t, frame{an.number, 3, kindReset, 0, scheduler.NodePID(bn.number, 0)}, reset{}),
		rawFrame(t, frame{an.number, 1 << 50, kindMessage, from, hk.PID()}, "high"),
	} {
		require.NoError(t, raw.Publish(bn.subject(bn.number), sealed(bn, wrong, an.number, an.incarnation, f)))
	}
	forged(6)
	// a heartbeat of a node that is not one
	fake := strconv.Itoa(900) + " mallory " + strconv.FormatUint(an.incarnation+1, 10) + " 1 up"
	require.NoError(t, raw.Publish("luarun.heartbeat", []byte(fake+" "+signer{secret: wrong}.hexSum([]byte("luarun.heartbeat"), []byte(fake)))))
	forged(7)

	// the real traffic: a's messages to b's process come, none dropped as
	// a duplicate; a replay of a real batch is dropped
	replays := make(chan []byte, 10)
	sub, err := raw.Subscribe(bn.subject(bn.number), func(m *nats.Msg) { replays <- m.Data })
	require.NoError(t, err)
	require.NoError(t, raw.Flush())
	require.NoError(t, a.sched.Send(0, hk.PID(), "real"))
	replay := <-replays
	require.NoError(t, sub.Unsubscribe())
	require.NoError(t, raw.Publish(bn.subject(bn.number), replay))
	waitFor(t, "the replay is dropped", time.Minute, func() bool { return bn.Stats().Duplicates == 1 })
	require.NoError(t, a.sched.Send(0, hk.PID(), "last"))
	select {
	case <-k.done:
	case <-time.After(time.Minute):
		t.Fatal("the real messages did not come")
	}
	k.mu.Lock()
	assert.Equal(t, []any{"real", "last"}, k.got, "only the real ones, once each")
	k.mu.Unlock()
	st := bn.Stats()
	assert.Equal(t, uint64(7), st.Forged)
	assert.Zero(t, st.Signals, "no forged kill or reset was acted on")
	assert.Zero(t, st.Lost)
	assert.Equal(t, []string{"a", "b"}, bn.Nodes(), "no forged node")
}

// TestSpawnReplayIsRefused: a signed spawn request that was run once is
// not run again when replayed; the next real one is.
func TestSpawnReplayIsRefused(t *testing.T) {
	srv := startServer(t)
	secret := []byte("s3cret")
	a := joinWith(t, srv, Config{Name: "a", Secret: secret})
	b := joinWith(t, srv, Config{Name: "b", Secret: secret})
	waitUp(t, []string{"a", "b"}, a, b)
	var calls atomic.Int64
	b.node.ServeSpawns(spawnCounter(&calls))
	raw := rawConnTo(t, srv)
	captured := make(chan []byte, 1)
	sub, err := raw.Subscribe(b.node.spawnSubject(b.node.number), func(m *nats.Msg) { captured <- m.Data })
	require.NoError(t, err)
	require.NoError(t, raw.Flush())
	_, err = a.node.SpawnOn(t.Context(), "b", nodelink.SpawnRequest{Name: "w.lua", Source: []byte("x"), Entry: "main"})
	require.NoError(t, err)
	// Unsubscribe only once the request is here: b's answer does not
	// wait for raw's copy, and nats.go drops what a subscription had not
	// handed to its callback when it is unsubscribed (a loaded machine
	// under -race lost it so).
	var real []byte
	select {
	case real = <-captured:
	case <-time.After(time.Minute):
		t.Fatalf("the raw subscriber on %s never saw the spawn request", b.node.spawnSubject(b.node.number))
	}
	require.NoError(t, sub.Unsubscribe())
	_, err = raw.Request(b.node.spawnSubject(b.node.number), real, 200*time.Millisecond)
	assert.ErrorIs(t, err, nats.ErrTimeout)
	waitFor(t, "the replay is counted", time.Minute, func() bool { return b.node.Stats().Stale == 1 })
	assert.Equal(t, int64(1), calls.Load())
	_, err = a.node.SpawnOn(t.Context(), "b", nodelink.SpawnRequest{Name: "w.lua", Source: []byte("x"), Entry: "main"})
	require.NoError(t, err)
	assert.Equal(t, int64(2), calls.Load())
}

// TestReplayWindow: sequence numbers are taken once each, in any order
// within the window; older ones, and those of an older incarnation, not.
func TestReplayWindow(t *testing.T) {
	var w window
	assert.True(t, w.take(5, 3))
	assert.False(t, w.take(5, 3))
	assert.True(t, w.take(5, 1))
	assert.True(t, w.take(5, 100))
	assert.False(t, w.take(5, 3), "too old for the window")
	assert.True(t, w.take(5, 99))
	assert.False(t, w.take(5, 99))
	assert.False(t, w.take(4, 200), "an older incarnation")
	assert.True(t, w.take(6, 1), "a newer one starts again")
	assert.False(t, w.take(6, 0))
}

// TestForgedNamesAreNoHolders: with a secret, an entry a client without
// it writes in the names' bucket names no holder (whereis finds none)
// and is counted; a process registers the name over it.
func TestForgedNamesAreNoHolders(t *testing.T) {
	srv := startServer(t)
	secret := []byte("s3cret")
	a := joinWith(t, srv, Config{Name: "a", Secret: secret})
	b := joinWith(t, srv, Config{Name: "b", Secret: secret})
	waitUp(t, []string{"a", "b"}, a, b)
	ctx := t.Context()
	js, err := jetstream.New(rawConnTo(t, srv))
	require.NoError(t, err)
	kv, err := js.KeyValue(ctx, "luarun_registry")
	require.NoError(t, err)
	victim := scheduler.NodePID(a.node.number, 1)
	_, err = kv.Put(ctx, nameKey("svc"), []byte(strconv.FormatUint(uint64(victim), 10)))
	require.NoError(t, err)
	waitFor(t, "both nodes count the forged entry", time.Minute, func() bool {
		return a.node.Stats().Forged == 1 && b.node.Stats().Forged == 1
	})
	_, found := b.node.Whereis("svc")
	assert.False(t, found)

	h, err := a.sched.Submit(&sink{last: "never", done: make(chan struct{})}, "main", nil)
	require.NoError(t, err)
	require.NoError(t, a.sched.Register("svc", h.PID()))
	require.NoError(t, a.node.Register(ctx, "svc", h.PID()), "the forged entry holds nothing")
	waitFor(t, "b sees the real holder", time.Minute, func() bool {
		pid, ok := b.node.Whereis("svc")
		return ok && pid == h.PID()
	})
}

// TestNoSecretIsWarnedOnce: a node without a secret says, once, that
// any client of the NATS account controls it; one with a secret says
// nothing of the kind.
func TestNoSecretIsWarnedOnce(t *testing.T) {
	srv := startServer(t)
	for _, secret := range [][]byte{nil, []byte("s")} {
		var mu sync.Mutex
		var warned int
		logf := func(format string, args ...any) {
			if strings.Contains(fmt.Sprintf(format, args...), "any client of the NATS account controls every node") {
				mu.Lock()
				warned++
				mu.Unlock()
			}
		}
		j := joinWith(t, srv, Config{Name: "n" + strconv.Itoa(len(secret)), Secret: secret, Logf: logf})
		j.node.beat()
		mu.Lock()
		assert.Equal(t, len(secret) == 0, warned == 1, "secret %q: warned %d times", secret, warned)
		assert.LessOrEqual(t, warned, 1)
		mu.Unlock()
	}
}
