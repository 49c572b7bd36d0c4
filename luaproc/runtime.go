package luaproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/internal/nodelink"
	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
	"github.com/luarun/luarun/serve"
)

// Runtime runs Lua processes on a work-stealing scheduler. Make one with
// New, register the application's commands, load scripts, start
// processes; Shutdown ends it. All methods are safe for concurrent use.
type Runtime struct {
	sched   *scheduler.Scheduler
	reg     *scheduler.Registry
	io      *commands.IO   // fs, http and exec (reachable from Lua only if allowed)
	serve   *serve.Service // http.serve and net (serving.go)
	allowed map[string]bool
	logger  *slog.Logger
	// quietCrashes: Options.QuietCrashes (internal errors are not logged)
	quietCrashes bool
	luaPath      string // Options.LuaPath
	// maxMailbox is Options.MaxMailbox, for the messages a process sends
	// itself (sendToSelf).
	maxMailbox int
	started    time.Time

	outMu sync.Mutex
	out   io.Writer

	mu     sync.Mutex
	app    appModules // what the application registered (appmodules.go)
	closed bool       // Shutdown has begun (under mu)

	files *scriptFiles // compiled script files (files.go)
	paths sync.Map     // program directory → its default package.path, boxed

	states sync.Pool // *pooledState: states of finished processes (pool.go)
	// keptViews counts the processes that started on a recycled state
	// with its last process's views (pool.go); starting goroutines add,
	// tests read.
	keptViews atomic.Int64

	exit exitRequest // the first os.exit (runaway.go)
	mem  *memBounds  // Options.MaxMemory and MaxProcessMemory (memory.go)

	cluster nodelink.Node  // Options.Cluster (cluster.go); nil: alone
	shipped shippedScripts // the scripts other nodes sent (cluster.go)
	// remoteEnds: the ends of processes started on other nodes, for
	// process.wait (remotewait.go)
	remoteEnds remoteEnds
	// spawnAnswers: the processes started for other nodes' spawn
	// requests (*luaProcess → *spawnAnswer), kept here rather than in
	// every luaProcess (its size class); remotewait.go
	spawnAnswers sync.Map
	answering    atomic.Int64 // how many spawnAnswers holds
	node         int          // this node's number in PIDs; 0 alone

	// droppedReplies counts replies that came after their call gave up
	// (calls.go); any process's goroutine adds to it.
	droppedReplies atomic.Int64

	// tpl is what every state copies (state.go); nil: to build. Every
	// process start loads it; a builder stores it and newTemplate clears
	// it, both under tplMu (never taken inside mu).
	tplMu sync.Mutex
	tpl   atomic.Pointer[template]
	// extraGlobals, for tests only (nil otherwise): called with the
	// template state and its globals table before the globals are
	// shared, to add Go functions no API offers (set it, then
	// newTemplate).
	extraGlobals func(L *lua.LState, g *lua.LTable)
}

// New starts a runtime and its workers. An option out of range, or a
// permission in Allow that does not exist, is an error (Options).
func New(opts Options) (*Runtime, error) {
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("luaproc.New: %w", err)
	}
	rt := &Runtime{
		reg:          new(scheduler.Registry),
		allowed:      map[string]bool{},
		logger:       opts.Logger,
		out:          opts.Stdout,
		luaPath:      opts.LuaPath,
		started:      time.Now(),
		files:        newScriptFiles(),
		quietCrashes: opts.QuietCrashes,
		maxMailbox:   opts.MaxMailbox,
	}
	for _, m := range opts.Allow {
		rt.allowed[m] = true
	}
	if rt.logger == nil {
		rt.logger = slog.Default()
	}
	if rt.out == nil {
		rt.out = os.Stdout
	}
	commands.Register(rt.reg)
	rt.reg.Register(deadlineCommand, armDeadline) // deadlines.go
	rt.io = commands.NewIO()
	rt.io.OnPanic = rt.ioPanicked // internal.go
	rt.io.Register(rt.reg)
	rt.serve = serve.New(serveHost{rt})
	rt.serve.Register(rt.reg)
	rt.exit.fn = opts.Exit
	rt.mem = newMemBounds(opts, rt.killForMemory)
	so := scheduler.Options{
		Workers: opts.Workers, Dispatcher: rt.reg,
		MaxStep: opts.MaxStep, MaxMailbox: opts.MaxMailbox, MailboxWarning: opts.MailboxWarning, MaxProcs: opts.MaxProcs,
		Warn: func(pid scheduler.PID, msg string) { rt.logger.Warn(msg, "pid", int64(pid)) },
	}
	if !opts.QuietCrashes {
		so.OnCrash = rt.crashReport
	}
	if opts.NoWatchdog {
		so.Slice = -1
	}
	if opts.Cluster != nil {
		link, _ := clusterLink(opts.Cluster) // a node: opts.check
		so.Relay, rt.cluster, rt.node = link, link, link.Node()
		rt.reg.Register(registerCommand, rt.registerInCluster)
		rt.reg.Register(spawnCommand, rt.spawnInCluster)
		rt.reg.Register(waitCommand, rt.waitInCluster)
		link.ServeSpawns(rt.spawnRequested)
	}
	rt.sched = scheduler.New(so)
	if rt.cluster != nil {
		if err := rt.cluster.Attach(rt.sched); err != nil {
			rt.logger.Error("cluster: the node does not receive messages", "err", err)
		}
		if err := rt.startCollector(); err != nil {
			rt.logger.Error("cluster: process.wait on other nodes' processes will not end", "err", err)
		}
	}
	return rt, nil
}

// LoadFile compiles the script at path, once: later loads of the same
// file (by any path that resolves to it) return the same Script. A
// syntax error is a *SyntaxError.
func (rt *Runtime) LoadFile(path string) (*Script, error) {
	return rt.files.load(path, "", true)
}

// LoadString compiles src; name appears in errors and tracebacks.
func (rt *Runtime) LoadString(name, src string) (*Script, error) {
	rt.files.compiled.Add(1)
	return Compile(name, src)
}

// loadRelative loads path for spawn_file: a relative path is tried next
// to the spawning script first, then from the working directory. Without
// fs, only a script inside the program's directory loads.
func (rt *Runtime) loadRelative(path, dir, progDir string) (*Script, error) {
	if !filepath.IsAbs(path) && dir != "" {
		cand := filepath.Join(dir, path)
		s, _ := rt.files.cached(cand)
		touch := s != nil || rt.mayTouch(cand, progDir)
		switch {
		case s != nil || touch && isFile(cand):
			path = cand
		case !touch:
			if _, inside := rt.lexicallyInside(cand, progDir); inside {
				path = cand // a link out of the directory: refused by this name
			}
		}
	}
	return rt.loadInside(path, progDir, false)
}

func (rt *Runtime) newProcess(s *Script) *luaProcess {
	return &luaProcess{rt: rt, script: s, progDir: s.dir}
}

// Start starts a process running entry of s with args (any Go values
// payload.FromGo converts; one it refuses is an error). Entry "" runs
// main, or the chunk alone if there is no main. Wait on the handle for the entry's return values, or its error:
// a *ScriptError (with Lua traceback), *EntryError, or *KilledError.
// The handle is how the caller learns of a failure, so a process started
// here is never the subject of a crash report (Options.QuietCrashes).
//
// ctx is the process's parent: its values are those of the context of
// every command the process calls (Call.Ctx), and when it is
// done the process is killed, with a *KilledError whose Cause is
// context.Cause(ctx) (errors.Is(err, context.Canceled) holds). A ctx done
// already starts nothing: Start returns its cause. The processes it
// spawns from Lua have neither its values nor its end.
func (rt *Runtime) Start(ctx context.Context, s *Script, entry string, args ...any) (Handle, error) {
	h, err := rt.start(ctx, rt.newProcess(s), entry, args)
	return Handle{h}, err
}

// start submits p for Start and StartMain.
func (rt *Runtime) start(ctx context.Context, p *luaProcess, entry string, args []any) (scheduler.Handle, error) {
	input, opts, err := startOptions(ctx, args)
	if err != nil {
		return scheduler.Handle{}, fmt.Errorf("start %s: %w", p.script.name, err)
	}
	h, _, err := rt.sched.SubmitWith(p, entry, input, opts)
	if err != nil {
		return scheduler.Handle{}, fmt.Errorf("start %s: %w", p.script.name, err)
	}
	return h, nil
}

// Call runs entry of s with args in a new process, as Start does, and
// returns what Wait would: the entry's return values, or the process's
// error. The process runs on the calling goroutine: its steps run here,
// and while it waits (for a command's answer, a message, a timer) this
// goroutine waits with it and takes it up again when the answer comes,
// with no worker in between. That is the cheapest way to run a process
// per request (an HTTP handler's): a request that calls a Go command
// answered from another goroutine costs one goroutine hand-off, where
// Start and Wait cost three.
//
// ctx is the process's parent, as Start's: its values reach the
// commands' calls, and when it is done the process is killed (a
// *KilledError whose Cause is context.Cause(ctx)) — at once if it
// waits, within two of the watchdog's ticks (about 10 ms) if its Lua
// code is running — and Call returns once the process has ended,
// whatever ends it (Kill, Shutdown, its deadline, Options.MaxStep). Past the runtime's bound on processes
// running on callers' goroutines at once (twice the workers), the steps
// of a Call run on the workers instead, and Call waits for them.
//
// Call blocks until the process ends: never call it from a command
// handler (a Handler), which runs on a worker.
func (rt *Runtime) Call(ctx context.Context, s *Script, entry string, args ...any) ([]any, error) {
	input, opts, err := startOptions(ctx, args)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", s.name, err)
	}
	h, err := rt.sched.Run(rt.newProcess(s), entry, input, opts)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", s.name, err)
	}
	res, err := h.Result()
	return res, err
}

// startOptions checks a start's context and converts its arguments:
// the process's input and its submit options.
func startOptions(ctx context.Context, args []any) (payload.Payloads, scheduler.SubmitOptions, error) {
	if ctx == nil {
		return nil, scheduler.SubmitOptions{}, errors.New("nil context")
	}
	if ctx.Err() != nil {
		return nil, scheduler.SubmitOptions{}, context.Cause(ctx)
	}
	input, err := payload.FromGoAll(args)
	if err != nil {
		return nil, scheduler.SubmitOptions{}, err
	}
	return input, scheduler.SubmitOptions{Waited: true, Context: ctx, KillReason: contextKilled}, nil
}

// contextKilled is the error a process ends with when its Start context
// is done.
func contextKilled(cause error) error {
	return &KilledError{Reason: cause.Error(), Cause: cause}
}

// Send delivers msg (converted by payload.FromGo) to process to, as from
// PID 0. It fails if to does not exist or has ended.
func (rt *Runtime) Send(to PID, msg any) error {
	return rt.sendFrom(0, to, msg)
}

func (rt *Runtime) sendFrom(from, to scheduler.PID, msg any) error {
	msg, err := payload.FromGo(msg)
	if err != nil {
		return fmt.Errorf("send to %d: %w", to, err)
	}
	if msg == nil { // a nil pointer too
		return fmt.Errorf("send to %d: message must not be nil", to)
	}
	return rt.sched.Send(from, to, msg)
}

// Kill cancels process pid; it ends with a *KilledError carrying reason.
func (rt *Runtime) Kill(pid PID, reason string) error {
	return rt.sched.Kill(pid, &KilledError{Reason: reason})
}

// Lookup returns the handle of a live process.
func (rt *Runtime) Lookup(pid PID) (Handle, bool) {
	h, ok := rt.sched.Lookup(pid)
	return Handle{h}, ok
}

// Shutdown first closes the servers of http.serve and waits, until ctx
// is done, for the requests they are running (new connections are
// refused meanwhile; the processes, those a request calls included, run
// on). Then it stops taking new processes, cancels every live one (each ends
// with the scheduler's shutdown error unless it finishes first), and
// waits for them until ctx is done; then it abandons the rest (returning
// a *ShutdownError) and stops the workers. Then it waits, also
// until ctx is done, for the I/O calls (fs, http, exec) still in flight,
// which their cancelled processes make short, and closes idle HTTP
// connections.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.mu.Lock()
	rt.closed = true // Register and its kin refuse from here on
	rt.mu.Unlock()
	rt.serve.Shutdown(ctx) // its deadline passing ends the drain, not the shutdown
	err := rt.sched.Shutdown(ctx)
	rt.mem.close()
	// after the processes: no I/O call or HTTP connection outlives the runtime
	if ioErr := rt.io.Close(ctx); err == nil {
		err = ioErr
	}
	if serveErr := rt.serve.Wait(ctx); err == nil {
		err = serveErr
	}
	return err
}

// checkOpen is ErrClosed once Shutdown has begun; the caller holds mu.
func (rt *Runtime) checkOpen() error {
	if rt.closed {
		return ErrClosed
	}
	return nil
}

func (rt *Runtime) writeOut(s string) {
	rt.outMu.Lock()
	defer rt.outMu.Unlock() // a Writer that panics must not keep it locked
	io.WriteString(rt.out, s)
}
