package luaproc

// A Runtime's options, and the checks New makes of them: a value out of
// range, or a permission that does not exist, is an error from New rather
// than a runtime that quietly does something else.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/scheduler"
)

// Options configure a Runtime. The zero value is a working runtime with
// no os, io (or fs, http, exec) access for scripts.
type Options struct {
	// Workers is the number of scheduler workers; 0 means GOMAXPROCS
	// (at most MaxWorkers). Negative, or above MaxWorkers, is an error.
	Workers int
	// Allow lists the modules scripts may use beyond the always-present
	// ones (any of Permissions(): "os", "io", "fs", "http", "exec",
	// "listen", "net"; another name is an error). A module not allowed raises "<module> is not
	// allowed ..." when used; "fs" also gives dofile and loadfile, and
	// lets process.spawn_file load scripts from outside the program's
	// directory; "listen" gives http.serve and net.listen, "net"
	// net.connect.
	Allow []string
	// Logger receives the log module's lines (with the process's pid)
	// and the runtime's own warnings and crash reports; nil means
	// slog.Default(). The luarun command plugs in charmbracelet/log's
	// Logger as the handler (it implements slog.Handler).
	Logger *slog.Logger
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
	// 0: no limit; without one, a step that keeps other processes waiting
	// is logged once per process after 1 s of wall time. Negative: an
	// error.
	MaxStep time.Duration
	// MaxMailbox bounds the messages waiting for one process: a send
	// beyond it returns nil, "mailbox full". 0: no bound (a warning is
	// logged once for a process that has 100,000 waiting). Negative: no
	// bound, no warning, and messages are not counted at all. An Inbox's
	// queue is the application's to read: it is not bounded.
	MaxMailbox int
	// MailboxWarning is the number of waiting messages that draws that
	// warning; 0 means 100,000; negative is an error.
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
	// still reach when it passes the bound (memory.go). 0: no bound;
	// negative: an error.
	MaxProcessMemory int64
	// Cluster, when set, runs the runtime as a node of a cluster
	// (cluster.Join): its PIDs name the node, and process.send reaches
	// processes on the other nodes (cluster.go). The runtime attaches
	// to it; closing it after Shutdown is the caller's. A ClusterNode
	// that package cluster did not make is an error.
	Cluster ClusterNode
}

// MaxWorkers is the most scheduler workers a Runtime runs
// (Options.Workers): past a thousand, starting, waking and stopping them
// costs more than they give.
const MaxWorkers = scheduler.MaxWorkers

// permissions are the modules Options.Allow switches on; Permissions
// hands out copies.
var permissions = []string{lua.OsLibName, lua.IoLibName, "fs", "http", "exec", "listen", "net"}

// Permissions returns the names Options.Allow accepts (all of them in
// the command-line runner unless --sandbox), in a new slice: changing it
// changes nothing.
func Permissions() []string { return slices.Clone(permissions) }

// check reports the first option out of range, or a permission that does
// not exist.
func (o *Options) check() error {
	if o.Workers < 0 || o.Workers > MaxWorkers {
		return fmt.Errorf("Workers %d: choose 1 to %d, or 0 for GOMAXPROCS", o.Workers, MaxWorkers)
	}
	for _, name := range o.Allow {
		if !slices.Contains(permissions, name) {
			return fmt.Errorf("Allow %q: no such permission (choose from %s)", name, strings.Join(permissions, ", "))
		}
	}
	if o.MaxStep < 0 {
		return errors.New("MaxStep must not be negative (0: no limit)")
	}
	if o.MaxProcessMemory < 0 {
		return errors.New("MaxProcessMemory must not be negative (0: no bound)")
	}
	if o.MailboxWarning < 0 {
		return errors.New("MailboxWarning must not be negative (0: 100,000)")
	}
	if o.Cluster != nil {
		if _, err := clusterLink(o.Cluster); err != nil {
			return err
		}
	}
	return nil
}
