package luaproc

// The hook that connects serving (package serve: http.serve and the net
// module) to the runtime. serve knows nothing of luaProcess: it gets a
// Host (below) that finds the calling process, starts request processes
// of its script, kills and logs. The rest of luaproc touches serving in
// a few places only:
//
//   - New makes the Service and registers its commands;
//   - buildTemplate adds its functions to the http and net tables
//     (addServing), and shareGlobals lets http.serve through a denied
//     http's stand-in;
//   - the conversion of messages, spawn arguments and results moves a
//     socket's handle (movable, converter.moves) and makes the arriving
//     process its owner (arrival);
//   - Shutdown drains the servers before it cancels the processes.
//
// The permissions "listen" and "net" are checked by serve's functions
// themselves (Allowed), so net is always a table and http.serve is
// there with or without the http permission.

import (
	"context"
	"log/slog"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
	"github.com/luarun/luarun/serve"
)

// servePermissions are the permissions serve checks itself: they are not
// modules with a stand-in when denied.
var servePermissions = map[string]bool{"listen": true, "net": true}

// serveHost is the runtime as serve sees it.
type serveHost struct{ rt *Runtime }

func (h serveHost) Caller(L *lua.LState) serve.Caller { return serveCaller{procOf(L)} }
func (h serveHost) Allowed(permission string) bool    { return h.rt.allowed[permission] }
func (h serveHost) Logger() *slog.Logger              { return h.rt.logger }
func (h serveHost) Kill(pid scheduler.PID, reason string) error {
	return h.rt.Kill(pid, reason)
}

// serveCaller is the process making a serve call.
type serveCaller struct{ p *luaProcess }

func (c serveCaller) PID() scheduler.PID       { return c.p.pid }
func (c serveCaller) Context() context.Context { return c.p.ctx() }

func (c serveCaller) Block(L *lua.LState, name, command string, args ...any) int {
	return c.p.block(L, name, &request{kind: reqCommand, name: command, args: args})
}

// CheckEntry answers an *EntryError if the script is known not to have
// entry (its chunk has run once: the caller runs it).
func (c serveCaller) CheckEntry(entry string) error {
	s := c.p.script
	if entries := s.entries.Load(); entries != nil && !containsString(*entries, entry) {
		return &EntryError{Script: s.name, Entry: entry, Entries: *entries}
	}
	return nil
}

// Starter starts processes of the caller's script, as process.spawn
// does, from any goroutine. The server waits on them (and logs a
// failure itself): they get no crash report. Their first steps run on
// the starting goroutine (scheduler.SubmitOptions.Inline): a handler
// that answers without blocking has ended when the start returns.
func (c serveCaller) Starter() serve.StartFunc {
	rt, s, dir := c.p.rt, c.p.script, c.p.progDir
	return func(entry string, args ...any) (scheduler.Handle, error) {
		child := rt.newProcess(s)
		child.progDir, child.topLevel = dir, true
		h, _, err := rt.sched.SubmitWith(child, entry, args, scheduler.SubmitOptions{Waited: true, Inline: true})
		return h, err
	}
}

// requestTable is the Lua request table of an http.serve request (the
// table serve.Request.Table describes, made without Go maps): each query
// key's first value; an empty query is a JSON object, as an empty map
// converts. Its strings are boxed where the Request holds them
// (lua.StringAt: the Request is never written once its process starts),
// its tables made for their sizes, the request's own from a Record (its
// seven keys laid out once).
func requestTable(L *lua.LState, r *serve.Request) *lua.LTable {
	query := L.CreateTable(0, len(r.Query))
	for i := range r.Query {
		f := &r.Query[i]
		if query.RawGetString(f.Name) == lua.LNil {
			query.RawSetString(f.Name, lua.StringAt(&f.Value))
		}
	}
	if len(r.Query) == 0 {
		query.Metatable = jsonObjectMT
	}
	headers := L.CreateTable(0, len(r.Headers))
	for i := range r.Headers {
		f := &r.Headers[i]
		headers.RawSetString(f.Name, lua.StringAt(&f.Value))
	}
	return requestRecord.Make(L, lua.StringAt(&r.Method), lua.StringAt(&r.Path), lua.StringAt(&r.URL),
		query, headers, lua.StringAt(&r.Body), lua.StringAt(&r.Remote))
}

// requestRecord is the request table's shape, its keys in Make's order.
var requestRecord = lua.NewRecord("method", "path", "url", "query", "headers", "body", "remote")

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addServing adds serve's functions to the template's module tables in
// g (making the table if the module has none: net, or http when the
// runtime does not allow http's client).
func (rt *Runtime) addServing(L *lua.LState, g *lua.LTable) {
	for module, fns := range rt.serve.Functions(L) {
		t, ok := g.RawGetString(module).(*lua.LTable)
		if !ok {
			t = L.CreateTable(0, len(fns))
			g.RawSetString(module, t)
		}
		for name, f := range fns {
			t.RawSetString(name, f)
		}
	}
}

// passThrough is the __index of a denied module's stand-in whose table
// t holds functions other permissions give (http.serve): those, and
// denied for the rest.
func passThrough(t *lua.LTable, denied lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if key, ok := L.Get(2).(lua.LString); ok {
			if v := t.RawGetString(string(key)); v != lua.LNil {
				L.Push(v)
				return 1
			}
		}
		return denied(L)
	}
}

// movable is a value a message carries by moving it (serve's socket
// handles): Move gives it up and returns what travels.
type movable interface{ Move() (any, error) }

// arrival is the Lua value of a moved value arriving in the process
// whose state L is; ok false for any other value.
func arrival(L *lua.LState, v any) (lua.LValue, bool) {
	p, ok := L.G.Views.Maker.(*luaProcess)
	if !ok || p.rt.serve == nil {
		return nil, false
	}
	return p.rt.serve.Arrival(v, p.ctx())
}
