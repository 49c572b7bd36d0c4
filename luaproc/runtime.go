package luaproc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/log"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
	"github.com/luarun/luarun/serve"
)

// Options configure a Runtime. The zero value is a working runtime with
// no os, io (or fs, http, exec) access for scripts.
type Options struct {
	// Workers is the number of scheduler workers; 0 means GOMAXPROCS.
	Workers int
	// Allow lists the modules scripts may use beyond the always-present
	// ones (any of Permissions: "os", "io", "fs", "http", "exec",
	// "listen", "net"). A module not allowed raises "<module> is not
	// allowed ..." when used; "fs" also gives dofile and loadfile, and
	// lets process.spawn_file load scripts from outside the program's
	// directory; "listen" gives http.serve and net.listen, "net"
	// net.connect.
	Allow []string
	// Logger receives the log module's lines (with the process's pid);
	// nil means a text logger on stderr at info level.
	Logger *log.Logger
	// Stdout receives print's lines; nil means os.Stdout.
	Stdout io.Writer
	// LuaPath replaces require's default search path
	// ("<dir>/?.lua;<dir>/?/init.lua", <dir> being the directory of the
	// script a program's first process runs): ';'-separated templates in
	// which '?' stands for the module name with its dots made '/', and
	// ";;" for the default. The luarun command passes $LUA_PATH.
	LuaPath string

	// MaxStep kills a process whose step — Lua code running without a
	// blocking call — runs longer, with an error naming the line it was
	// at ("pid 42 spin.lua:17: ran 2s without blocking"). The time is the
	// CPU time the step was given (its share of the program's), not wall
	// time: a step starved by load is not killed (scheduler/watchdog.go).
	// 0: no limit; without one, such a step is logged once per process
	// after 1 s of wall time.
	MaxStep time.Duration
	// MaxMailbox bounds the messages waiting for one process: a send
	// beyond it returns nil, "mailbox full". 0: no bound (a warning is
	// logged once for a process that has 100,000 waiting). Negative: no
	// bound, no warning, and messages are not counted at all. An Inbox's
	// queue is the application's to read: it is not bounded.
	MaxMailbox int
	// MailboxWarning is the number of waiting messages that draws that
	// warning; 0 means 100,000.
	MailboxWarning int
	// MaxProcs bounds the live processes: a spawn beyond it returns nil
	// and an error (Start fails). 0: 1,048,576; negative: no bound.
	MaxProcs int
	// Exit is called, once, with the status of the first os.exit a
	// process calls (on the goroutine running it; it must not block).
	// The luarun command shuts down and exits with it. nil: os.exit only
	// ends the calling process (with an *ExitError).
	Exit func(code int)
	// QuietCrashes turns crash reports off: without it, a process that
	// fails with an error of its own while nothing links it, monitors it
	// or waits on it is logged at error level (its PID, entry, error and
	// where), since nothing else would tell. (Start's caller holds the
	// handle: the processes it starts count as waited on.)
	QuietCrashes bool
	// NoWatchdog turns the scheduler's watchdog off: nothing helps the
	// processes queued behind a busy one, and MaxStep and the slow-step
	// warning do nothing. For measuring what the watchdog costs.
	NoWatchdog bool
	// MaxMemory bounds the memory of the whole runtime, in bytes: an
	// allocation a process asks for that would take the Go heap past it
	// raises "not enough memory" in that process (catchable by pcall),
	// and when the heap passes it all the same a watchdog ends the
	// process that counts the most with that error (memory.go). It also
	// becomes Go's soft memory limit (debug.SetMemoryLimit) if that is
	// higher. 0: three quarters of the machine's memory
	// (DefaultMaxMemory); negative: no bound.
	MaxMemory int64
	// MaxProcessMemory bounds each process's memory, in bytes, as
	// Erlang's max_heap_size does: an allocation that would take the
	// process past it raises "not enough memory" in the process
	// (catchable), and a process found holding more ends with that
	// error. The count is what the runtime allocates on the process's
	// behalf (strings, tables, stacks, closures, coroutines, the large
	// strings of the messages it takes in), re-based on what it can
	// still reach when it passes the bound (memory.go). 0: no bound.
	MaxProcessMemory int64
	// Cluster, when set, runs the runtime as a node of a cluster
	// (cluster.Join): its PIDs name the node, and process.send reaches
	// processes on the other nodes (cluster.go). The runtime attaches
	// its scheduler to it; closing it after Shutdown is the caller's.
	Cluster ClusterNode
}

// Runtime runs Lua processes on a work-stealing scheduler. Make one with
// New, register the application's commands, load scripts, start
// processes; Shutdown ends it. All methods are safe for concurrent use.
type Runtime struct {
	sched   *scheduler.Scheduler
	reg     *scheduler.Registry
	io      *commands.IO   // fs, http and exec (reachable from Lua only if allowed)
	serve   *serve.Service // http.serve and net (serving.go)
	allowed map[string]bool
	logger  *log.Logger
	// quietCrashes: Options.QuietCrashes (internal errors are not logged)
	quietCrashes bool
	luaPath      string // Options.LuaPath
	// maxMailbox is Options.MaxMailbox, for the messages a process sends
	// itself (sendToSelf).
	maxMailbox int
	started    time.Time

	outMu sync.Mutex
	out   io.Writer

	mu  sync.Mutex
	app appModules // what the application registered (appmodules.go)

	files *scriptFiles // compiled script files (files.go)
	paths sync.Map     // program directory → its default package.path, boxed

	states sync.Pool // *pooledState: states of finished processes (pool.go)

	exit exitRequest // the first os.exit (runaway.go)
	mem  *memBounds  // Options.MaxMemory and MaxProcessMemory (memory.go)

	cluster ClusterNode    // Options.Cluster (cluster.go); nil: alone
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

	tplMu sync.Mutex // guards tpl; never taken inside mu
	tpl   *template  // what every state copies (state.go); nil: to build
}

// New starts a runtime and its workers.
func New(opts Options) *Runtime {
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
		rt.logger = log.NewWithOptions(os.Stderr, log.Options{ReportTimestamp: true})
	}
	if rt.out == nil {
		rt.out = os.Stdout
	}
	commands.Register(rt.reg)
	rt.io = commands.NewIO()
	rt.io.OnPanic = rt.ioPanicked // internal.go
	rt.io.Register(rt.reg)
	rt.serve = serve.New(serveHost{rt})
	rt.serve.Register(rt.reg)
	rt.exit.fn = opts.Exit
	rt.mem = newMemBounds(opts, rt.kill)
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
		so.Relay, rt.cluster, rt.node = opts.Cluster, opts.Cluster, opts.Cluster.Node()
		rt.reg.Register(registerCommand, rt.registerInCluster)
		rt.reg.Register(spawnCommand, rt.spawnInCluster)
		rt.reg.Register(waitCommand, rt.waitInCluster)
		opts.Cluster.ServeSpawns(rt.spawnRequested)
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
	return rt
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

// Start starts a process running entry of s with args (payload values:
// nil, bool, int64, float64, string, []byte, []any, map[string]any,
// map[any]any). Entry "" runs main, or the chunk alone if there is no
// main. Wait on the handle for the entry's return values, or its error:
// a *ScriptError (with Lua traceback), *EntryError, or *KilledError.
// The handle is how the caller learns of a failure, so a process started
// here is never the subject of a crash report (Options.QuietCrashes).
func (rt *Runtime) Start(s *Script, entry string, args ...any) (scheduler.Handle, error) {
	if err := payload.CheckAll(args); err != nil {
		return scheduler.Handle{}, fmt.Errorf("start %s: %w", s.name, err)
	}
	h, _, err := rt.sched.SubmitWith(rt.newProcess(s), entry, args, scheduler.SubmitOptions{Waited: true})
	if err != nil {
		return scheduler.Handle{}, fmt.Errorf("start %s: %w", s.name, err)
	}
	return h, nil
}

// Send delivers msg (a payload value) to process to, as from PID 0.
// It fails if to does not exist or has ended.
func (rt *Runtime) Send(to scheduler.PID, msg any) error {
	return rt.sendFrom(0, to, msg)
}

func (rt *Runtime) sendFrom(from, to scheduler.PID, msg any) error {
	if msg == nil {
		return fmt.Errorf("send to %d: message must not be nil", to)
	}
	if err := payload.Check(msg); err != nil {
		return fmt.Errorf("send to %d: %w", to, err)
	}
	return rt.sched.Send(from, to, msg)
}

// Kill cancels process pid; it ends with a *KilledError carrying reason.
func (rt *Runtime) Kill(pid scheduler.PID, reason string) error {
	return rt.sched.Kill(pid, &KilledError{Reason: reason})
}

// Lookup returns the handle of a live process.
func (rt *Runtime) Lookup(pid scheduler.PID) (scheduler.Handle, bool) {
	return rt.sched.Lookup(pid)
}

// Stats is a snapshot of a Runtime's counters: the scheduler's, and the
// scripts compiled.
type Stats struct {
	scheduler.Stats
	// ScriptsCompiled counts compilations: LoadString, and each file
	// LoadFile, process.spawn_file or require compiled (once per file;
	// a compile that failed is tried again next time, and counted again).
	ScriptsCompiled int64
	// DroppedReplies counts process.reply answers that came after their
	// call had given up (its timeout).
	DroppedReplies int64
}

// Stats returns the runtime's counters.
func (rt *Runtime) Stats() Stats {
	return Stats{Stats: rt.sched.Stats(), ScriptsCompiled: rt.files.compiled.Load(), DroppedReplies: rt.droppedReplies.Load()}
}

// Shutdown first closes the servers of http.serve and waits, until ctx
// is done, for the requests they are running (new connections are
// refused meanwhile; the processes, those a request calls included, run
// on). Then it stops taking new processes, cancels every live one (each ends
// with the scheduler's shutdown error unless it finishes first), and
// waits for them until ctx is done; then it abandons the rest (returning
// a *scheduler.ShutdownError) and stops the workers. Then it waits, also
// until ctx is done, for the I/O calls (fs, http, exec) still in flight,
// which their cancelled processes make short, and closes idle HTTP
// connections.
func (rt *Runtime) Shutdown(ctx context.Context) error {
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

func (rt *Runtime) writeOut(s string) {
	rt.outMu.Lock()
	defer rt.outMu.Unlock() // a Writer that panics must not keep it locked
	io.WriteString(rt.out, s)
}
