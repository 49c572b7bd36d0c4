// Package serve is luarun's serving: http.serve (an HTTP/1.1 server on
// Go's net/http, each request a new process) and the net module (TCP
// listeners and connections as handles a process owns).
//
// It knows nothing of how processes run: the runtime (luaproc) gives it
// a Host, which finds the process a Lua call runs in (a Caller), starts
// request processes, kills them and logs. The runtime makes one Service,
// registers its commands (the yielding calls: accept, read, write,
// srv:close), adds its Lua functions to every process's http and net
// tables (Functions), and calls Shutdown before it cancels the processes,
// so that servers drain first.
//
// Permissions: listening (http.serve, net.listen) needs "listen",
// connecting (net.connect) needs "net"; each function checks its own at
// call time, so the net table is always there.
//
// Ownership: a server, listener or connection belongs to the process
// that made it (or received it) and is closed when that process's
// context ends (context.AfterFunc): the runtime ends a process's context
// when the process ends, however it ends. A listener or connection
// passed to process.spawn or process.send moves (Move, Arrive).
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
)

// Host is what serving needs of the runtime.
type Host interface {
	// Caller is the process whose coroutine L is.
	Caller(L *lua.LState) Caller
	// Allowed reports whether the runtime grants permission ("listen",
	// "net").
	Allowed(permission string) bool
	// Kill cancels process pid with reason.
	Kill(pid scheduler.PID, reason string) error
	// Logger is the runtime's logger.
	Logger() *slog.Logger
}

// Caller is the process making a Lua call.
type Caller interface {
	PID() scheduler.PID
	// Context is done when the process ends.
	Context() context.Context
	// Block yields the process on command with args (a registered
	// command); the Lua call returns the command's result. name is the
	// call's name in errors ("c:read").
	Block(L *lua.LState, name, command string, args ...any) int
	// CheckEntry says whether the caller's script has entry point entry.
	CheckEntry(entry string) error
	// Starter returns a function that starts a process running entry
	// of the caller's script with args, from any goroutine.
	Starter() StartFunc
}

// StartFunc starts a process (Caller.Starter).
type StartFunc func(entry string, args ...any) (scheduler.Handle, error)

// Service is one runtime's servers, listeners and connections.
type Service struct {
	host Host

	mu      sync.Mutex
	servers map[*server]bool // open servers (not yet closed)
	closing bool             // Shutdown has begun: no new server

	wg sync.WaitGroup // the goroutines of commands in flight and of drains

	mts metatables // the handles' metatables (Functions)
}

// New makes a Service for a runtime.
func New(h Host) *Service {
	return &Service{host: h, servers: map[*server]bool{}}
}

// Register installs the yielding calls' commands on reg.
func (s *Service) Register(reg *scheduler.Registry) {
	reg.Register(cmdServerClose, s.serverClose)
	reg.Register(cmdAccept, s.accept)
	reg.Register(cmdConnect, s.connect)
	reg.Register(cmdRead, s.read)
	reg.Register(cmdWrite, s.write)
}

// Functions makes the Lua functions serving adds, by module: http.serve
// and the net module. L is the runtime's template state; the handles'
// metatables are made in it too.
func (s *Service) Functions(L *lua.LState) map[string]map[string]lua.LValue {
	s.makeMetatables(L)
	return map[string]map[string]lua.LValue{
		"http": {"serve": L.NewFunction(s.serve)},
		"net": {
			"listen":  L.NewFunction(s.listen),
			"connect": L.NewFunction(s.connectFunc),
		},
	}
}

// Shutdown closes every server and waits, until ctx is done, for the
// requests in flight (which keep running: the runtime cancels processes
// only after this returns), and then for the goroutines of commands.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	var srvs []*server
	for srv := range s.servers {
		srvs = append(srvs, srv)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, srv := range srvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.drain(ctx)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// Wait waits until ctx is done for the goroutines of the commands in
// flight and of drains (the runtime calls it once its processes ended,
// whose contexts end those commands).
func (s *Service) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("serve: commands still running: %w", ctx.Err())
	}
}

// go runs f on a goroutine Wait waits for.
func (s *Service) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// notAllowed raises the error of a call the runtime does not allow.
func notAllowed(L *lua.LState, fn, permission string) {
	L.RaiseError("%s: %s is not allowed (run without --sandbox or with --allow %s)", fn, permission, permission)
}

// checkAllowed raises unless permission is granted.
func (s *Service) checkAllowed(L *lua.LState, fn, permission string) {
	if !s.host.Allowed(permission) {
		notAllowed(L, fn, permission)
	}
}

// seconds reads a duration in seconds from v (a number); absent (nil)
// gives def. Negative is refused; one too large for a timer
// (math.huge) means none, -1.
func seconds(v lua.LValue, def time.Duration) (time.Duration, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return def, nil
	case lua.LNumber:
		f := float64(x)
		switch {
		case f != f:
			return 0, errors.New("seconds expected, got NaN")
		case f < 0:
			return 0, errors.New("seconds must not be negative")
		case f >= float64(1<<63-1)/1e9:
			return -1, nil
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	return 0, fmt.Errorf("number expected, got %s", v.Type())
}
