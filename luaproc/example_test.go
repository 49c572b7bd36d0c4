package luaproc_test

// Runnable examples of the embedding API, as an application outside the
// package writes them: every error handled.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/luarun/luarun/luaproc"
)

// newRuntime is New with a logger that drops everything (an application
// passes its own *slog.Logger).
func newRuntime() (*luaproc.Runtime, error) {
	return luaproc.New(luaproc.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
}

// shutdown ends rt, giving its processes five seconds.
func shutdown(rt *luaproc.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		fmt.Println("shutdown:", err)
	}
}

// An application embeds luarun: it registers a command that Lua calls as
// db.query, starts a Lua process, talks to it through an Inbox, waits
// for its result and shuts down.
func Example() {
	rt, err := newRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shutdown(rt)

	// db.query yields the Lua process; the handler answers later, from
	// another goroutine, without holding a worker.
	err = rt.Register("db.query", func(c luaproc.Call) error {
		sql, _ := c.Args[0].(string)
		go func() {
			rows := []map[string]any{{"name": "ann", "sql": sql}}
			c.Complete(rows) // the Lua call's one result
		}()
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	script, err := rt.LoadString("greeter.lua", `
function main(inbox)
  local rows = db.query("select name from users")
  process.send(inbox, "hello " .. rows[1].name)
  local msg = process.receive()        -- waits for Go's reply
  return "got " .. msg, #rows
end`)
	if err != nil {
		fmt.Println(err)
		return
	}
	inbox, err := rt.NewInbox()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer inbox.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := rt.Start(ctx, script, "main", int64(inbox.PID()))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := inbox.Receive(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Value)
	// from the inbox's PID, so Lua could reply
	if err := inbox.Send(h.PID(), "bye"); err != nil {
		fmt.Println(err)
		return
	}
	res, err := h.Wait(ctx)
	fmt.Println(res, err)
	// Output:
	// hello ann
	// [got bye 1] <nil>
}

// New checks its options: a permission that does not exist, or a worker
// count out of range, is an error rather than a runtime that quietly
// does something else.
func ExampleNew() {
	_, err := luaproc.New(luaproc.Options{Allow: []string{"network"}})
	fmt.Println(err)
	_, err = luaproc.New(luaproc.Options{Workers: 5000})
	fmt.Println(err)

	rt, err := luaproc.New(luaproc.Options{
		Workers: 4,
		Allow:   []string{"fs"},
		Logger:  slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shutdown(rt)
	s, err := rt.LoadString("hello.lua", `log.info("hello", "user", "ann")`)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := rt.Start(context.Background(), s, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := h.Wait(context.Background()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// luaproc.New: Allow "network": no such permission (choose from os, io, fs, http, exec, listen, net)
	// luaproc.New: Workers 5000: choose 1 to 1024, or 0 for GOMAXPROCS
	// level=INFO msg=hello pid=1 user=ann
}

// noTime drops slog's time attribute, so that the example's output is
// the same every run.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

type requestIDKey struct{}

// Start's context is the process's parent: its values reach the Go
// commands the process calls, and its cancellation kills the process
// with the context's cause.
func ExampleRuntime_Start() {
	rt, err := newRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shutdown(rt)
	err = rt.Register("req.id", func(c luaproc.Call) error {
		id, _ := c.Ctx.Value(requestIDKey{}).(string)
		c.Complete(id)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := rt.LoadString("handler.lua", `
function main()
  local id = req.id()
  process.receive()   -- waits for a message that never comes
  return id
end
function quick() return req.id() end`)
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.WithValue(context.Background(), requestIDKey{}, "req-42")
	h, err := rt.Start(ctx, s, "quick")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Wait(ctx))

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	h, err = rt.Start(ctx, s, "main")
	if err != nil {
		fmt.Println(err)
		return
	}
	cancel(errors.New("the client went away"))
	_, err = h.Wait(context.Background())
	var killed *luaproc.KilledError
	fmt.Println(err, errors.As(err, &killed))

	_, err = rt.Start(ctx, s, "main") // done already: nothing starts
	fmt.Println(err)
	// Output:
	// [req-42] <nil>
	// killed: the client went away true
	// start handler.lua: the client went away
}

// An HTTP handler runs a Lua process per request with Call: the process
// runs on the handler's goroutine, which waits with it while db.get is
// answered from another goroutine; the request's context is its parent.
func ExampleRuntime_Call() {
	rt, err := newRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shutdown(rt)
	err = rt.Register("db.get", func(c luaproc.Call) error {
		key, _ := c.Args[0].(string)
		go c.Complete("value of " + key) // later, from another goroutine
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := rt.LoadString("handler.lua", `
function handle(method, key)
  return 200, method .. " " .. key .. ": " .. db.get(key)
end`)
	if err != nil {
		fmt.Println(err)
		return
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := rt.Call(r.Context(), s, "handle", r.Method, r.URL.Query().Get("key"))
		if err != nil { // a *luaproc.ScriptError, a *luaproc.KilledError...
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		status, _ := res[0].(int64)
		body, _ := res[1].(string)
		w.WriteHeader(int(status))
		fmt.Fprintln(w, body)
	})

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest("GET", "/item?key=k42", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 200 GET k42: value of k42
}

// A command is registered once: registering it again is an error, and
// the first handler stays.
func ExampleRuntime_Register() {
	rt, err := newRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shutdown(rt)
	answer := func(c luaproc.Call) error {
		c.Complete("pong")
		return nil
	}
	if err := rt.Register("app.ping", answer); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rt.Register("app.ping", answer))
	fmt.Println(rt.Register("ping", answer))
	// Output:
	// register "app.ping": app.ping is registered already
	// register "ping": a command is named module.function
}

// RegisterLuaModule and RegisterGoModule give scripts modules of the
// application's: one written in Lua, one in Go.
func ExampleRuntime_RegisterLuaModule() {
	rt, err := newRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shutdown(rt)

	// A Lua module: require("app.money") runs it once per process.
	money, err := rt.LoadString("money.lua", `
local M = {}
function M.format(cents) return string.format("%d.%02d", cents / 100, cents % 100) end
return M`)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rt.RegisterLuaModule("app.money", money); err != nil {
		fmt.Println(err)
		return
	}

	// A Go module: plain functions, called without yielding.
	err = rt.RegisterGoModule("tax", map[string]luaproc.Func{
		"vat": func(args []any) ([]any, error) {
			cents, _ := args[0].(int64)
			return []any{cents * 20 / 100}, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	script, err := rt.LoadString("invoice.lua", `
local money = require("app.money")
local tax = require("tax")
function main(cents)
  return money.format(cents + tax.vat(cents))
end`)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := rt.Start(context.Background(), script, "main", int64(1250))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Wait(context.Background()))
	// Output: [15.00] <nil>
}

// Permissions lists what Options.Allow accepts; the slice is the
// caller's own.
func ExamplePermissions() {
	fmt.Println(luaproc.Permissions())
	// Output: [os io fs http exec listen net]
}

// After Shutdown, the calls that need a running runtime fail with
// ErrClosed.
func ExampleErrClosed() {
	rt, err := newRuntime()
	if err != nil {
		fmt.Println(err)
		return
	}
	shutdown(rt)
	err = rt.Register("app.ping", func(c luaproc.Call) error { return nil })
	fmt.Println(err, errors.Is(err, luaproc.ErrClosed))
	// Output: register "app.ping": scheduler is shut down true
}
