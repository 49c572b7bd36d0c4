// Command embed-http is an HTTP service that runs its request handlers as
// Lua processes: the program docs/embedding.md walks through.
//
//	go run ./examples/embed-http -addr 127.0.0.1:8080
//	curl http://127.0.0.1:8080/items/apple        # apple = red (worker 2, item 1)
//	curl -X PUT -d green http://127.0.0.1:8080/items/apple
//
// Each request starts a Lua process (app.lua's handle) with the request's
// context; the process asks the database through db.get, a Go command
// answered from a goroutine, then a worker of a supervised pool of Lua
// processes through process.call, and returns the status and body.
// SIGINT or SIGTERM drains: the server stops accepting, the requests in
// flight finish (their processes and the pool run on), then the runtime
// shuts down and the program exits 0.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/luarun/luarun/luaproc"
)

//go:embed app.lua
var appLua string

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve on (port 0: any free port)")
	workers := flag.Int("pool", 4, "Lua render workers in the pool")
	latency := flag.Duration("db-latency", 0, "how long each database lookup takes")
	verbose := flag.Bool("v", false, "log each database lookup")
	flag.Parse()
	if *workers < 1 {
		fmt.Fprintln(os.Stderr, "embed-http: -pool must be at least 1")
		os.Exit(2)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := run(*addr, *workers, *latency, log); err != nil {
		log.Error("embed-http", "err", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then drains and shuts down.
func run(addr string, workers int, latency time.Duration, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// 1. The runtime: no os, io, fs, http or exec for the scripts.
	rt, err := luaproc.New(luaproc.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("new runtime: %w", err)
	}
	defer shutdownRuntime(rt, log)

	// 2. The application's command, before any process that calls it.
	db := newDB(latency)
	if err := rt.Register("db.get", db.handleGet(log)); err != nil {
		return err
	}

	// 3. The script, compiled once for every process.
	script, err := rt.LoadString("app.lua", appLua)
	if err != nil {
		return err
	}

	// 4. The pool: a long-lived process whose supervisor runs the workers.
	pool, err := startPool(rt, script, workers)
	if err != nil {
		return err
	}
	poolDown := make(chan error, 1)
	go func() { // the pool ends only at shutdown; if it fails, so do we
		_, err := pool.Wait(context.Background())
		poolDown <- err
	}()

	// 5. The HTTP server: a Lua process per request.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: newHandler(rt, script, db, workers, log)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// 6. Graceful shutdown.
	select {
	case <-ctx.Done():
		stop() // a second Ctrl-C kills at once
		log.Info("shutting down: draining requests in flight")
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case err := <-poolDown:
		srv.Close()
		return fmt.Errorf("the render pool ended: %w", err)
	}
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(drain); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	log.Info("drained")
	return nil
}

// shutdownRuntime ends every process (the pool's supervisor stops its
// workers) and waits for them.
func shutdownRuntime(rt *luaproc.Runtime, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		log.Error("runtime shutdown", "err", err)
	}
}

// startPool starts app.lua's pool with n workers and waits until its
// supervisor has started them all (it sends n to an Inbox of ours).
func startPool(rt *luaproc.Runtime, script *luaproc.Script, n int) (luaproc.Handle, error) {
	inbox, err := rt.NewInbox()
	if err != nil {
		return luaproc.Handle{}, err
	}
	defer inbox.Close()
	// Not the signal's context: the pool must outlive SIGINT until the
	// requests in flight are answered; rt.Shutdown ends it.
	h, err := rt.Start(context.Background(), script, "pool", n, inbox.PID())
	if err != nil {
		return luaproc.Handle{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := inbox.Receive(ctx); err != nil {
		return luaproc.Handle{}, fmt.Errorf("pool did not start: %w", err)
	}
	return h, nil
}

// db is the application's data: a map behind a mutex, as slow as latency.
type db struct {
	mu      sync.Mutex
	items   map[string]string
	latency time.Duration
}

func newDB(latency time.Duration) *db {
	return &db{items: map[string]string{"apple": "red", "banana": "yellow", "kiwi": "green"}, latency: latency}
}

// get looks key up, as a database call would: it takes latency, or less
// if ctx ends first.
func (d *db) get(ctx context.Context, key string) (string, bool, error) {
	if d.latency > 0 {
		select {
		case <-time.After(d.latency):
		case <-ctx.Done():
			return "", false, context.Cause(ctx)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.items[key]
	return v, ok, nil
}

func (d *db) put(key, value string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.items[key] = value
}

// handleGet is the db.get command. It returns at once; a goroutine does
// the lookup and completes the Lua call: value, or nil when there is no
// such item, or nil and the error's message (Fail).
func (d *db) handleGet(log *slog.Logger) luaproc.Handler {
	return func(c luaproc.Call) error {
		if len(c.Args) != 1 {
			return errors.New("db.get(key): one argument expected")
		}
		key, ok := c.Args[0].(string)
		if !ok {
			return fmt.Errorf("db.get(key): key must be a string, not %T", c.Args[0])
		}
		go func() {
			// c.Ctx has the values of the context given to Start (here
			// the request's ID) and ends if the process is killed.
			log.Debug("db.get", "key", key, "request", c.Ctx.Value(requestIDKey{}))
			v, found, err := d.get(c.Ctx, key)
			switch {
			case err != nil:
				c.Fail(err)
			case !found:
				c.Complete(nil)
			default:
				c.Complete(v)
			}
		}()
		return nil
	}
}

// requestIDKey is the context key of a request's ID.
type requestIDKey struct{}

// newHandler routes GET /items/ to a Lua process per request; PUT
// /items/ and GET /healthz are plain Go.
func newHandler(rt *luaproc.Runtime, script *luaproc.Script, d *db, workers int, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	var ids atomic.Int64
	mux.HandleFunc("GET /items/{key}", func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), requestIDKey{}, ids.Add(1))
		serveLua(w, r.WithContext(ctx), rt, script, workers, log)
	})
	mux.HandleFunc("PUT /items/{key}", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.put(r.PathValue("key"), string(body))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		for i := 1; i <= workers; i++ { // each worker registered: none restarting
			if _, ok := rt.Whereis(fmt.Sprintf("render%d", i)); !ok {
				http.Error(w, fmt.Sprintf("render%d is not running", i), http.StatusServiceUnavailable)
				return
			}
		}
		io.WriteString(w, "ok\n")
	})
	return mux
}

// serveLua runs app.lua's handle for r in a process of its own, on this
// goroutine (Runtime.Call). The process has r's context: if the client
// goes away, it is killed.
func serveLua(w http.ResponseWriter, r *http.Request, rt *luaproc.Runtime, script *luaproc.Script, workers int, log *slog.Logger) {
	res, err := rt.Call(r.Context(), script, "handle", r.PathValue("key"), workers)
	switch {
	case errors.Is(err, luaproc.ErrClosed):
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	case r.Context().Err() != nil:
		return // the client went away: the process was killed, nobody reads an answer
	case err != nil: // a *luaproc.ScriptError carries the Lua traceback
		log.Error("handler failed", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	status, body, ok := statusAndBody(res)
	if !ok {
		log.Error("handler returned", "results", res)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(int(status))
	io.WriteString(w, body)
}

// statusAndBody reads handle's results: a status and a body.
func statusAndBody(res []any) (int64, string, bool) {
	if len(res) != 2 {
		return 0, "", false
	}
	status, ok1 := res[0].(int64)
	body, ok2 := res[1].(string)
	return status, body, ok1 && ok2
}
