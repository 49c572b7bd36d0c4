package luaproc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/internal/nodelink"
)

// TestShippedScriptsCompiledOnce: a script another node sends is
// compiled on its first request and taken from the cache, by the hash of
// its source, on the next; another source is another script; a source
// that does not compile is the request's error.
func TestShippedScriptsCompiledOnce(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	src := []byte(`function twice(x, to) process.send(to, x * 2) end`)
	var pids [2]int64
	for i := range pids {
		pid, err := spawnRequest(rt, "w.lua", src, "twice", []any{int64(21), int64(inbox.PID())}, nil, 0)
		require.NoError(t, err)
		pids[i] = int64(pid)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		m, err := inbox.Receive(ctx)
		cancel()
		require.NoError(t, err)
		assert.Equal(t, int64(42), m.Value)
	}
	assert.NotEqual(t, pids[0], pids[1])
	assert.Len(t, rt.shipped.scripts, 1, "compiled once")
	_, err = spawnRequest(rt, "w.lua", []byte(`function twice(x) return x * 3 end`), "twice", []any{int64(1), int64(inbox.PID())}, nil, 0)
	require.NoError(t, err)
	assert.Len(t, rt.shipped.scripts, 2)
	_, err = spawnRequest(rt, "bad.lua", []byte(`function (`), "main", nil, nil, 0)
	assert.ErrorContains(t, err, "bad.lua:1:")
}

// TestSpawnRequestNeedsThePermissions: a node whose runtime lacks a
// permission this one has is refused (a --sandbox node cannot spawn_on
// a node without the sandbox); one with all of them, or more, is not.
func TestSpawnRequestNeedsThePermissions(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"os", "exec"}})
	src := []byte(`function main() end`)
	_, err := spawnRequest(rt, "w.lua", src, "main", nil, nil, 0)
	assert.ErrorContains(t, err, `this node allows "exec", which the requesting node does not`)
	_, err = spawnRequest(rt, "w.lua", src, "main", nil, []string{"os"}, 0)
	assert.ErrorContains(t, err, `"exec"`)
	_, err = spawnRequest(rt, "w.lua", src, "main", nil, []string{"exec", "fs", "os"}, 0)
	assert.NoError(t, err)
	assert.Equal(t, []string{"exec", "os"}, rt.permissions())
}

// TestARefusedSpawnRequestIsNoCrash: a spawn request for an entry the
// script lacks is refused with the *EntryError (the script never ran
// here, so its process had to run the chunk to know), and its process's
// end is not reported as a crash: the requesting node was told. A
// process that fails on its own still is.
func TestARefusedSpawnRequestIsNoCrash(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	_, err := spawnRequest(rt, "w.lua", []byte(`function a(inbox) process.send(inbox, 1) error("boom") end`), "nope", nil, nil, 0)
	var ee *EntryError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, `w.lua: unknown entry "nope" (entries: a)`, err.Error())
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	_, err = spawnRequest(rt, "w.lua", []byte(`function a(inbox) process.send(inbox, 1) error("boom") end`), "a", []any{int64(inbox.PID())}, nil, 0)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = inbox.Receive(ctx) // it ran: its crash is reported before it has ended
	require.NoError(t, err)
	require.NoError(t, rt.Shutdown(ctx)) // every process has ended
	assert.Contains(t, logs.String(), "boom")
	assert.NotContains(t, logs.String(), "nope")
}

// spawnRequest is rt's side of a spawn request with these fields.
func spawnRequest(rt *Runtime, name string, source []byte, entry string, args []any, allowed []string, from PID) (PID, error) {
	return rt.spawnRequested(nodelink.SpawnRequest{Name: name, Source: source, Entry: entry, Args: args, Allowed: allowed, From: from})
}
