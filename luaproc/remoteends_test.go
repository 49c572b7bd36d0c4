package luaproc

// The table of remote ends keeps nothing nobody can take: the end of a
// process whose spawn_on request failed here (it timed out, or its
// requester was killed, while the process ran there) is removed once no
// request that may claim it is in flight.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/internal/nodelink"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// TestRemoteEndsKeepNoUnclaimedEnd: an end that comes with no entry is
// kept while a request that began before it is in flight, for the one
// that claims it; once the requests that may claim it have finished, it
// is gone; with none in flight it is not kept at all.
func TestRemoteEndsKeepNoUnclaimedEnd(t *testing.T) {
	var r remoteEnds
	const waiter = scheduler.PID(7)
	lost, early, late := scheduler.NodePID(2, 1), scheduler.NodePID(2, 2), scheduler.NodePID(2, 3)
	r.end(late, payload.Payloads{true}, true)
	assert.Zero(t, r.count(), "no request is in flight: nobody could claim it")

	first := r.begin()
	r.end(lost, payload.Payloads{true}, true) // first's process; first times out
	second := r.begin()
	r.end(early, payload.Payloads{true, "early"}, true) // second's, or first's
	r.finish(first)
	assert.Equal(t, 1, r.count(), "lost came before second began: first's alone, gone")
	third := r.begin()
	r.claim(early, waiter)
	r.finish(second)
	r.end(late, payload.Payloads{true}, true) // third's, or second's
	r.finish(third)
	assert.Equal(t, 1, r.count(), "late gone, only the claimed one stays")
	if e := r.of(early, waiter); assert.NotNil(t, e) {
		<-e.done
		assert.Equal(t, payload.Payloads{true, "early"}, e.result)
		r.take(early, e)
	}
	assert.Zero(t, r.count())
}

// TestRemoteEndsReleaseAnAnswerNobodyGot: a PID claimed for a waiter
// that ended before its answer came is released: at once if its end
// came, else when it comes.
func TestRemoteEndsReleaseAnAnswerNobodyGot(t *testing.T) {
	var r remoteEnds
	const waiter = scheduler.PID(7)
	ended, running := scheduler.NodePID(2, 1), scheduler.NodePID(2, 2)
	req := r.begin()
	r.end(ended, payload.Payloads{true}, true)
	r.claim(ended, waiter)
	r.claim(running, waiter)
	r.finish(req)
	r.release(ended, waiter)
	r.release(running, waiter)
	assert.Equal(t, 1, r.count(), "the running one, until its end")
	r.end(running, payload.Payloads{false, "noconnection"}, false)
	assert.Zero(t, r.count())
}

// beta plays the other node of a two-node cluster for a runtime on
// alpha: each spawn request "starts" a process there, whose end it sends
// to the requester's collector at once; answer says what the request
// returns then (the PID, or an error).
type beta struct {
	sched  *scheduler.Scheduler
	mu     sync.Mutex
	n      int
	answer func(ctx context.Context, n int, pid scheduler.PID) (scheduler.PID, error)
}

func (b *beta) Node() int                                            { return 1 }
func (b *beta) Forward(_, to scheduler.PID, _ any) error             { return fmt.Errorf("beta has no %d", to) }
func (b *beta) Signal(scheduler.Signal) error                        { return nil }
func (b *beta) Attach(s *scheduler.Scheduler) error                  { b.sched = s; return nil }
func (b *beta) Name() string                                         { return "alpha" }
func (b *beta) Nodes() []string                                      { return []string{"alpha", "beta"} }
func (b *beta) Register(context.Context, string, PID) error          { return nil }
func (b *beta) Whereis(string) (scheduler.PID, bool)                 { return 0, false }
func (b *beta) ServeSpawns(func(nodelink.SpawnRequest) (PID, error)) {}

func (b *beta) SpawnOn(ctx context.Context, _ string, req nodelink.SpawnRequest) (PID, error) {
	from := req.From
	b.mu.Lock()
	b.n++
	n := b.n
	b.mu.Unlock()
	pid := scheduler.NodePID(2, uint64(n))
	end := scheduler.RemoteCall{ID: endCallID, Reply: true, Value: []any{true, fmt.Sprint("run ", n)}}
	if err := b.sched.Send(pid, from, end); err != nil {
		return 0, err
	}
	return b.answer(ctx, n, pid)
}

// betaRuntime is a runtime on alpha with beta as its other node, and
// the path of a script that spawns on beta (and of the script it
// spawns, which beta never reads).
func betaRuntime(t *testing.T, b *beta, src string) (*Runtime, string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w.lua"), []byte("function main() end"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.lua"), []byte(src), 0o644))
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, Cluster: b})
	return rt, filepath.Join(dir, "main.lua")
}

// TestATimedOutSpawnLeavesNoEnd: a spawn_on that timed out here while
// its process ran on beta (and ended: its end came) leaves no entry; the
// next spawn_on's end is waited on and taken as before.
func TestATimedOutSpawnLeavesNoEnd(t *testing.T) {
	b := &beta{answer: func(_ context.Context, n int, pid scheduler.PID) (scheduler.PID, error) {
		if n == 1 {
			return 0, fmt.Errorf("spawn on %q: %w", "beta", context.DeadlineExceeded)
		}
		return pid, nil
	}}
	rt, path := betaRuntime(t, b, `function main()
  local none, err = process.spawn_on("beta", "w.lua")
  assert(none == nil and err:find("deadline exceeded"), tostring(err))
  local ok, v = process.wait(assert(process.spawn_on("beta", "w.lua")))
  assert(ok == true and v == "run 2", tostring(v))
  return true
end`)
	s, err := rt.LoadFile(path)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, []any{true}, res)
	assert.Zero(t, rt.remoteEnds.count(), "the timed-out request's end is not kept")
}

// TestAKilledRequesterLeavesNoEnd: a process killed while its spawn_on
// was out, whose answer (a PID) came anyway, leaves no entry for it.
func TestAKilledRequesterLeavesNoEnd(t *testing.T) {
	out, ended := make(chan struct{}), make(chan struct{})
	b := &beta{answer: func(ctx context.Context, _ int, pid scheduler.PID) (scheduler.PID, error) {
		close(out)
		<-ended // the requester was killed; the answer comes all the same
		return pid, nil
	}}
	rt, path := betaRuntime(t, b, `function main() process.spawn_on("beta", "w.lua") end`)
	s, err := rt.LoadFile(path)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	<-out
	require.NoError(t, rt.sched.Kill(h.PID(), errors.New("enough")))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = h.Wait(ctx)
	require.ErrorContains(t, err, "enough")
	close(ended)
	for rt.remoteEnds.count() != 0 { // the request's goroutine releases it after the kill
		select {
		case <-ctx.Done():
			t.Fatalf("%d entries stay", rt.remoteEnds.count())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
