package cluster

// A node restarted under its name after it was killed (kill -9: no bye,
// its name's claim left until it expires) joins without waiting for the
// claim to expire; a live node's name is still refused.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// TestRestartAfterAKillTakesTheSilentClaim: the claim a killed node left
// (made here as it leaves it: the name's key, holding its number, never
// refreshed again) is taken over once it has been silent for DownAfter
// heartbeats, long before nameTTL.
func TestRestartAfterAKillTakesTheSilentClaim(t *testing.T) {
	srv := startServer(t)
	a := join(t, srv, "a") // makes the names' bucket
	waitUp(t, []string{"a"}, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(rawConnTo(t, srv))
	require.NoError(t, err)
	names, err := js.KeyValue(ctx, a.node.cfg.Cluster+"_names")
	require.NoError(t, err)
	_, err = names.Create(ctx, "k", []byte("77"))
	require.NoError(t, err)
	start := time.Now()
	again, err := Join(ctx, Config{URL: srv.URL(), Name: "k", Heartbeat: 100 * time.Millisecond})
	require.NoError(t, err, "the killed node's claim was not taken over")
	took := time.Since(start)
	t.Logf("joined after %v (nameTTL %v)", took.Round(time.Millisecond), nameTTL)
	assert.Less(t, took, nameTTL, "the claim was waited out rather than taken over")
	e, err := names.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(again.number), string(e.Value()), "the claim is the new node's")
	require.NoError(t, again.Close())
}

// TestALiveNodesClaimIsNotTaken: a node whose claim is refreshed keeps
// its name, however long the newcomer watches.
func TestALiveNodesClaimIsNotTaken(t *testing.T) {
	srv := startServer(t)
	a := join(t, srv, "a")
	waitUp(t, []string{"a"}, a)
	_, err := Join(t.Context(), Config{URL: srv.URL(), Name: "a", Heartbeat: 100 * time.Millisecond})
	assert.ErrorContains(t, err, `a node named "a" is up already`)
}

// TestANodeWhoseClaimWasTakenLeaves: a node that finds its name's claim
// another node's (taken over while it was silent: stopped, or cut off)
// leaves the cluster rather than answer to a name another node holds.
func TestANodeWhoseClaimWasTakenLeaves(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k, err := Join(ctx, Config{URL: srv.URL(), Name: "k", Heartbeat: 100 * time.Millisecond})
	require.NoError(t, err)
	s := scheduler.New(scheduler.Options{Workers: 1, Relay: k})
	require.NoError(t, k.Attach(s))
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		k.Close()
	})
	js, err := jetstream.New(rawConnTo(t, srv))
	require.NoError(t, err)
	names, err := js.KeyValue(ctx, k.cfg.Cluster+"_names")
	require.NoError(t, err)
	_, err = names.Put(ctx, "k", []byte("999")) // as a node that took it over
	require.NoError(t, err)
	select {
	case <-k.stop:
	case <-ctx.Done():
		t.Fatal("the node stayed, answering to a name another node holds")
	}
}
