package luaproc

// Mistakes an embedder makes are errors from the call that made them:
// options out of range, unknown permissions, a command or module
// registered twice, a call after Shutdown.

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestNewRefusesBadOptions: each option out of range, and a permission
// that does not exist, makes New fail with a message naming it; the
// bounds themselves are accepted.
func TestNewRefusesBadOptions(t *testing.T) {
	for _, c := range []struct {
		opts Options
		msg  string
	}{
		{Options{Workers: -1}, "Workers -1: choose 1 to 1024, or 0 for GOMAXPROCS"},
		{Options{Workers: MaxWorkers + 1}, "Workers 1025: choose 1 to 1024"},
		{Options{Allow: []string{"os", "network"}}, `Allow "network": no such permission (choose from os, io, fs, http, exec, listen, net)`},
		{Options{Allow: []string{"OS"}}, `Allow "OS": no such permission`},
		{Options{MaxStep: -time.Second}, "MaxStep must not be negative"},
		{Options{MaxProcessMemory: -1}, "MaxProcessMemory must not be negative"},
		{Options{MailboxWarning: -5}, "MailboxWarning must not be negative"},
		{Options{Cluster: madeUpNode{}}, "Options.Cluster: luaproc.madeUpNode is not a node of a cluster (make one with cluster.Join)"},
	} {
		rt, err := New(c.opts)
		assert.Nil(t, rt)
		require.Error(t, err, "%+v", c.opts)
		assert.Contains(t, err.Error(), "luaproc.New: "+c.msg)
	}
	for _, opts := range []Options{{Workers: 1}, {Workers: MaxWorkers}, {Allow: Permissions()}, {MaxMemory: -1, MaxMailbox: -1, MaxProcs: -1}} {
		opts.Logger = slog.New(slog.DiscardHandler)
		rt, err := New(opts)
		require.NoError(t, err, "%+v", opts)
		require.NoError(t, rt.Shutdown(context.Background()))
	}
}

// madeUpNode is a ClusterNode that package cluster did not make: it has
// the names an application sees, and nothing a runtime needs of a node.
type madeUpNode struct{}

func (madeUpNode) Name() string    { return "mine" }
func (madeUpNode) Nodes() []string { return []string{"mine"} }

// TestRegisterTwiceIsAnError: a command, a Go function or a Lua module
// registered again is refused, and the first registration stays in
// force.
func TestRegisterTwiceIsAnError(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	answer := func(v string) Handler {
		return func(c Call) error { c.Complete(v); return nil }
	}
	require.NoError(t, rt.Register("db.query", answer("first")))
	err := rt.Register("db.query", answer("second"))
	require.EqualError(t, err, `register "db.query": db.query is registered already`)
	require.EqualError(t, rt.Register("db.exec", nil), `register "db.exec": no handler`)

	fn := func([]any) ([]any, error) { return payload.Payloads{"go"}, nil }
	require.NoError(t, rt.RegisterGoModule("util", map[string]Func{"id": fn}))
	require.EqualError(t, rt.RegisterGoModule("util", map[string]Func{"id": fn}), "register module util: util.id is registered already")
	require.EqualError(t, rt.RegisterGoModule("db", map[string]Func{"query": fn}), "register module db: db.query is registered already")
	require.EqualError(t, rt.Register("util.id", answer("x")), `register "util.id": util.id is registered already`)

	mod, err := rt.LoadString("m.lua", "return {v = 1}")
	require.NoError(t, err)
	require.NoError(t, rt.RegisterLuaModule("app.m", mod))
	require.EqualError(t, rt.RegisterLuaModule("app.m", mod), "register module app.m: registered already")

	res, err := runLua(t, rt, "twice.lua", `return db.query(), util.id(), require("app.m").v`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"first", "go", int64(1)}, res)
}

// TestUseAfterShutdown: registering, starting a process or making an
// inbox once Shutdown has begun is an error wrapping ErrClosed.
func TestUseAfterShutdown(t *testing.T) {
	rt, err := New(Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := rt.LoadString("late.lua", "return 1")
	require.NoError(t, err)
	require.NoError(t, rt.Shutdown(context.Background()))

	h := func(c Call) error { return nil }
	fn := func([]any) ([]any, error) { return nil, nil }
	_, startErr := rt.Start(context.Background(), s, "")
	_, mainErr := rt.StartMain(context.Background(), s, "", MainOptions{})
	_, inboxErr := rt.NewInbox()
	for name, err := range map[string]error{
		"Register":          rt.Register("db.query", h),
		"RegisterGoModule":  rt.RegisterGoModule("util", map[string]Func{"id": fn}),
		"RegisterLuaModule": rt.RegisterLuaModule("app.m", s),
		"Start":             startErr,
		"StartMain":         mainErr,
		"NewInbox":          inboxErr,
	} {
		assert.ErrorIs(t, err, ErrClosed, name)
	}
}

// TestPermissionsIsACopy: what Permissions returns is the caller's: taking
// "os" out of it, or renaming an entry, neither grants os nor changes
// what New accepts.
func TestPermissionsIsACopy(t *testing.T) {
	p := Permissions()
	require.Contains(t, p, "os")
	p = slices.DeleteFunc(p, func(s string) bool { return s == "os" })
	p[0] = "nothing"
	assert.Equal(t, []string{"os", "io", "fs", "http", "exec", "listen", "net"}, Permissions())

	rt, _, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "os.lua", "return os.execute('true')", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "os is not allowed")
}
