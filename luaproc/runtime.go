package luaproc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/log"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Options configure a Runtime. The zero value is a working runtime with
// no os, io (or fs, http, exec) access for scripts.
type Options struct {
	// Workers is the number of scheduler workers; 0 means GOMAXPROCS.
	Workers int
	// Allow lists the modules scripts may use beyond the always-present
	// ones (any of Permissions: "os", "io", "fs", "http", "exec"). A
	// module not allowed raises "<module> is not allowed ..." when used;
	// "fs" also gives dofile and loadfile, and lets process.spawn_file
	// load scripts from outside the program's directory.
	Allow []string
	// Logger receives the log module's lines (with the process's pid);
	// nil means a text logger on stderr at info level.
	Logger *log.Logger
	// Stdout receives print's lines; nil means os.Stdout.
	Stdout io.Writer
}

// Runtime runs Lua processes on a work-stealing scheduler. Make one with
// New, register the application's commands, load scripts, start
// processes; Shutdown ends it. All methods are safe for concurrent use.
type Runtime struct {
	sched   *scheduler.Scheduler
	reg     *scheduler.Registry
	io      *commands.IO // fs, http and exec (reachable from Lua only if allowed)
	allowed map[string]bool
	logger  *log.Logger
	started time.Time

	outMu sync.Mutex
	out   io.Writer

	mu      sync.Mutex
	modules map[string][]string // application modules → function names
	scripts map[string]*Script  // compiled files, by absolute path

	states sync.Pool // *pooledState: states of finished processes (pool.go)

	tplMu sync.Mutex // guards tpl; never taken inside mu
	tpl   *template  // what every state copies (state.go); nil: to build
}

// New starts a runtime and its workers.
func New(opts Options) *Runtime {
	rt := &Runtime{
		reg:     new(scheduler.Registry),
		allowed: map[string]bool{},
		logger:  opts.Logger,
		out:     opts.Stdout,
		started: time.Now(),
		modules: map[string][]string{},
		scripts: map[string]*Script{},
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
	rt.io.Register(rt.reg)
	rt.sched = scheduler.New(scheduler.Options{Workers: opts.Workers, Dispatcher: rt.reg})
	return rt
}

// Register makes an application command callable from Lua as
// module.function: Register("db.query", h) gives every process started
// afterwards a global table db with a function query. A call yields the
// process; h runs on the worker's goroutine and must return at once,
// completing c (c.Complete / c.Fail) now or later from any goroutine.
// The Lua call returns the completion's values, or nil and the error's
// message. Register commands before starting the processes that use them.
func (rt *Runtime) Register(command string, h scheduler.HandlerFunc) error {
	module, fn, ok := strings.Cut(command, ".")
	if !ok || !payload.IsIdent(module) || !payload.IsIdent(fn) {
		return fmt.Errorf("register %q: a command is named module.function", command)
	}
	if slices.Contains(requirable, module) {
		return fmt.Errorf("register %q: %s is a built-in module", command, module)
	}
	rt.mu.Lock()
	added := !slices.Contains(rt.modules[module], fn)
	if added {
		rt.modules[module] = append(rt.modules[module], fn)
	}
	rt.mu.Unlock()
	if added {
		rt.tplMu.Lock()
		rt.tpl = nil // the next state gets the new function
		rt.tplMu.Unlock()
	}
	rt.reg.Register(command, h)
	return nil
}

func (rt *Runtime) appModules() map[string][]string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	m := make(map[string][]string, len(rt.modules))
	for k, v := range rt.modules {
		m[k] = slices.Clone(v)
	}
	return m
}

// LoadFile compiles the script at path (once: later loads of the same
// file return the same Script). A syntax error is a *SyntaxError.
func (rt *Runtime) LoadFile(path string) (*Script, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	rt.mu.Lock()
	s, ok := rt.scripts[abs]
	rt.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err = CompileFile(path)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if prev, ok := rt.scripts[abs]; ok {
		return prev, nil
	}
	rt.scripts[abs] = s
	return s, nil
}

// LoadString compiles src; name appears in errors and tracebacks.
func (rt *Runtime) LoadString(name, src string) (*Script, error) {
	return Compile(name, src)
}

// loadRelative loads path for spawn_file: a relative path is tried next
// to the spawning script first, then from the working directory.
func (rt *Runtime) loadRelative(path, dir, progDir string) (*Script, error) {
	if !filepath.IsAbs(path) && dir != "" {
		if cand := filepath.Join(dir, path); fileExists(cand) {
			path = cand
		}
	}
	if !rt.allowed["fs"] {
		// A sandboxed program may start its own scripts but not read
		// other files: a syntax error would show their contents.
		if !inside(path, progDir) {
			where := "the program has no directory"
			if progDir != "" {
				where = "it is outside the program's directory " + progDir
			}
			return nil, fmt.Errorf("%s: %s, and %s", path, where, notAllowed("fs"))
		}
	}
	return rt.LoadFile(path)
}

// inside reports whether the file at path is under dir, with symbolic
// links resolved (a link inside dir to a file outside is not).
func inside(path, dir string) bool {
	if dir == "" {
		return false
	}
	d, err1 := resolvePath(dir)
	f, err2 := resolvePath(path)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(d, f)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolvePath is path made absolute with its symbolic links resolved; for
// a file that does not exist, those of its directory.
func resolvePath(path string) (string, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return filepath.Abs(r)
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Abs(filepath.Join(r, filepath.Base(path)))
	}
	return filepath.Abs(path)
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func (rt *Runtime) newProcess(s *Script) *luaProcess {
	return &luaProcess{rt: rt, script: s, progDir: s.dir}
}

// Start starts a process running entry of s with args (payload values:
// nil, bool, int64, float64, string, []byte, []any, map[string]any,
// map[any]any). Entry "" runs main, or the chunk alone if there is no
// main. Wait on the handle for the entry's return values, or its error:
// a *ScriptError (with Lua traceback), *EntryError, or *KilledError.
func (rt *Runtime) Start(s *Script, entry string, args ...any) (scheduler.Handle, error) {
	if err := payload.CheckAll(args); err != nil {
		return scheduler.Handle{}, fmt.Errorf("start %s: %w", s.name, err)
	}
	h, err := rt.sched.Submit(rt.newProcess(s), entry, args)
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

// Stats returns the scheduler's counters.
func (rt *Runtime) Stats() scheduler.Stats { return rt.sched.Stats() }

// Shutdown stops taking new processes, cancels every live one (each ends
// with the scheduler's shutdown error unless it finishes first), and
// waits for them until ctx is done; then it abandons the rest (returning
// a *scheduler.ShutdownError) and stops the workers. Then it waits, also
// until ctx is done, for the I/O calls (fs, http, exec) still in flight,
// which their cancelled processes make short, and closes idle HTTP
// connections.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	err := rt.sched.Shutdown(ctx)
	// after the processes: no I/O call or HTTP connection outlives the runtime
	if ioErr := rt.io.Close(ctx); err == nil {
		err = ioErr
	}
	return err
}

func (rt *Runtime) writeOut(s string) {
	rt.outMu.Lock()
	io.WriteString(rt.out, s)
	rt.outMu.Unlock()
}
