package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/internal/nodelink"
	"github.com/luarun/luarun/luaproc"
	"github.com/luarun/luarun/scheduler"
)

// TestSpawnWaitsForItsRequesterToBeUp: a spawn request read before its
// sender's first heartbeat (NATS hands the two subscriptions their
// messages on goroutines of their own) starts its process only once the
// sender is up here — its first send to the requester would otherwise
// fail with "not up". The sender here has not attached (it never beats)
// when its request goes out: the answer waits for its Attach; a sender
// that never comes up is answered with an error after DownAfter beats.
func TestSpawnWaitsForItsRequesterToBeUp(t *testing.T) {
	srv, err := StartServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	// beta gives a requester DownAfter 4 beats (0.4 s); gamma 600 (60 s),
	// more than a loaded machine takes to read alpha's first beat
	b, g := join(t, srv, "beta"), joinWith(t, srv, Config{Name: "gamma", DownAfter: 600})
	upAtSpawn := make(chan bool, 2)
	for _, r := range []joined{b, g} {
		r.node.ServeSpawns(func(req nodelink.SpawnRequest) (luaproc.PID, error) {
			upAtSpawn <- r.node.up(req.From.Node())
			return 7, nil
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	a, err := Join(ctx, Config{URL: srv.URL(), Name: "alpha", Heartbeat: 100 * time.Millisecond})
	cancel()
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })

	ask := func(to *Node) (*natsAnswer, error) {
		from := scheduler.NodePID(a.number, 1)
		req, err := a.spawnRequest(to.number, to.incarnation, []any{"w.lua", "", "main", []any{}, []any{}, int64(from)})
		if err != nil {
			return nil, err
		}
		m, err := a.nc.Request(a.spawnSubject(to.number), req, 2*time.Minute)
		if err != nil {
			return nil, err
		}
		v, err := readValue(m.Data[a.sign.size():])
		return &natsAnswer{v}, err
	}
	// never up: refused, nothing started
	got, err := ask(b.node)
	require.NoError(t, err)
	assert.Contains(t, got.v, "the requester, is not up here")
	assert.Empty(t, upAtSpawn)

	answered := make(chan *natsAnswer, 1)
	go func() {
		got, err := ask(g.node)
		assert.NoError(t, err)
		answered <- got
	}()
	s := scheduler.New(scheduler.Options{Workers: 1, Relay: a})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
	})
	require.NoError(t, a.Attach(s)) // alpha beats: beta hears it
	assert.True(t, <-upAtSpawn, "the process started before its requester was up")
	assert.Equal(t, int64(7), (<-answered).v)
}

type natsAnswer struct{ v any }
