package commands

// The I/O commands (fs.*, http.*, exec.*) share one design: the handler
// checks its arguments on the worker and returns at once (an argument
// error fails the call there); the I/O itself runs on a goroutine of its
// own that ends with c.Complete or c.Fail. That goroutine watches c.Ctx,
// which is done when the calling process is killed or ends: an HTTP
// request is made with that context, a child process is started with it,
// file data is read and written in chunks that check it, so a kill aborts
// the work and the goroutine leaves. Its completion is then dropped by
// the scheduler, which is harmless. Close waits for those goroutines: the
// runtime closes its IO once every process has ended (and so every
// context is done), and no temp file or child is left behind after it.
//
// What a call brings into memory is capped at maxDataBytes (256 MiB): a
// file read, a response body, each of a command's stdout and stderr. A
// larger one fails the call ("file larger than 256 MiB") instead of
// exhausting the runtime's memory.
//
// Errors read as "<command> <subject>: <what went wrong>", e.g.
// "fs.read /x/y: no such file or directory": the wrappers Go puts around
// system errors (*fs.PathError, *url.Error, *net.OpError...) are peeled
// off, since the command and its subject already say what was attempted.
//
// An IO is not a global: the Lua layer decides which modules a runtime
// allows and registers an IO's commands itself; Close lets the runtime's
// shutdown leave no goroutine behind.

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/luarun/luarun/scheduler"
)

// maxDataBytes caps a file read, a response body and each output stream
// of a command.
const maxDataBytes = 256 << 20

// ioChunk is how much file data is read or written between two checks of
// the call's context.
const ioChunk = 1 << 20

// IO holds what the I/O commands share: an HTTP client (connection reuse,
// sane timeouts) and a bound on concurrent file operations.
type IO struct {
	transport *http.Transport
	client    *http.Client
	// fsSlots bounds the file operations in flight: each blocks an OS
	// thread, and thousands of processes reading at once must not make
	// thousands of threads.
	fsSlots chan struct{}
	// goroutines runs every call's I/O (goroutines.go), and counts the
	// calls running there, for Close to wait for.
	goroutines goroutinePool
	// maxData is maxDataBytes (tests lower it).
	maxData int64
	// files are fs.open's open files (fsfile.go).
	files openFiles
	// streams are exec.start's commands (execstream.go).
	streams streams
	// OnPanic, if set, hears of a panic on one of the IO's goroutines
	// (with its stack), which fails the call it was running, if any,
	// instead of ending the program (luaproc logs it as a crash report).
	// Set it before the first call.
	OnPanic func(*scheduler.PanicError)
}

// DefaultHTTPTimeout bounds an HTTP request (connect, headers and body)
// whose options give no timeout.
const DefaultHTTPTimeout = 30 * time.Second

// NewIO makes an IO with its own HTTP transport.
func NewIO() *IO {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// The default keeps 2 idle connections per host (100 in all): with
	// many processes calling one service at once, most connections would
	// be closed after each request and redialled.
	t.MaxIdleConnsPerHost = 1024
	t.MaxIdleConns = 1024
	return &IO{
		transport: t,
		// No Client.Timeout: each request gets its own deadline (opts.timeout,
		// or DefaultHTTPTimeout) through its context.
		client:  &http.Client{Transport: t, CheckRedirect: followRedirects},
		fsSlots: make(chan struct{}, max(16, 4*runtime.GOMAXPROCS(0))),
		maxData: maxDataBytes,
	}
}

// ioCommands are the I/O commands: each one's handler, and the check of
// its arguments that the handler starts with (CheckArgs runs it alone).
var ioCommands = []struct {
	name  string
	run   func(*IO, scheduler.Call) error
	check func(args []any) error
}{
	{"fs.read", (*IO).fsRead, func(a []any) error { _, err := argPath(a, 0); return err }},
	{"fs.write", (*IO).fsWrite, func(a []any) error { _, _, err := writeArgs(a); return err }},
	{"fs.list", (*IO).fsList, func(a []any) error { _, err := argPath(a, 0); return err }},
	{"fs.stat", (*IO).fsStat, func(a []any) error { _, err := argPath(a, 0); return err }},
	{"fs.mkdir", (*IO).fsMkdir, func(a []any) error { _, _, err := mkdirArgs(a); return err }},
	{"fs.remove", (*IO).fsRemove, func(a []any) error { _, err := argPath(a, 0); return err }},
	{"fs.rename", (*IO).fsRename, func(a []any) error { _, _, err := renameArgs(a); return err }},
	{"fs.append", (*IO).fsAppend, func(a []any) error { _, _, err := writeArgs(a); return err }},
	{"fs.open", (*IO).fileOpen, func(a []any) error { _, _, err := openArgs(a); return err }},
	// a handle's methods (fsfile.go): not functions of a module
	{"file:read", (*IO).fileRead, readFormats},
	{"file:lines", (*IO).fileLines, noCheck},
	{"file:write", (*IO).fileWrite, func(a []any) error { _, err := writeData(a); return err }},
	{"file:seek", (*IO).fileSeek, func(a []any) error { _, _, err := seekArgs(a); return err }},
	{"file:close", (*IO).fileClose, noCheck},
	{"http.get", (*IO).httpGet, func(a []any) error { _, err := getArgs(a); return err }},
	{"http.request", (*IO).httpRequest, func(a []any) error { _, err := requestArgs(a); return err }},
	{"exec.run", (*IO).execRun, func(a []any) error { _, err := parseCommand(a); return err }},
	{"exec.start", (*IO).execStart, func(a []any) error { _, err := parseStart(a); return err }},
	// an exec.start handle's methods (execstream.go)
	{"exec:lines", (*IO).execLines, noCheck},
	{"exec:write", (*IO).execWrite, func(a []any) error { _, err := argString(a, 1); return err }},
	{"exec:close", (*IO).execClose, noCheck},
	{"exec:wait", (*IO).execWait, noCheck},
	{"exec:kill", (*IO).execKill, noCheck},
}

// noCheck: lines and close check their handle as they run.
func noCheck([]any) error { return nil }

// Register installs the I/O commands (Commands) on reg.
func (o *IO) Register(reg *scheduler.Registry) {
	for _, cmd := range ioCommands {
		run := cmd.run
		reg.Register(cmd.name, func(c scheduler.Call) error { return run(o, c) })
	}
}

// Commands lists the I/O commands that are functions of a Lua module,
// module.function: fs.read, fs.write, ..., http.get, exec.run (not the
// file:read and the other methods of fs.open's and exec.start's handles).
func Commands() []string {
	var names []string
	for _, cmd := range ioCommands {
		if !strings.Contains(cmd.name, ":") { // a handle's methods, not a module's
			names = append(names, cmd.name)
		}
	}
	return names
}

// CheckArgs reports the error an I/O command's handler would fail with
// at once for args (a wrong type, a NUL byte in a path...), without doing
// any I/O; nil for valid arguments and for other commands. A Lua caller
// raises it: in Lua, misuse raises, while a failure of the I/O itself is
// returned as nil, err.
func CheckArgs(command string, args []any) error {
	for _, cmd := range ioCommands {
		if cmd.name == command {
			return cmd.check(args)
		}
	}
	return nil
}

// Close waits for the calls in flight, which end soon once their
// processes have (call it after the processes ended: their contexts are
// done then), then lets the idle goroutines and HTTP connections go. If
// ctx ends first (a file call stuck in a hung file system), Close stops
// waiting and says so. The IO stays usable.
func (o *IO) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() { o.goroutines.running.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("I/O calls still running: %w", context.Cause(ctx))
	}
	o.goroutines.Close()
	o.transport.CloseIdleConnections()
	return err
}

// start runs f, I/O of no call's, on a pooled goroutine; a panic in f
// is reported (OnPanic) instead of ending the program.
func (o *IO) start(f func()) {
	o.goroutines.Go(func() {
		defer o.recoverPanic(scheduler.Call{}, "I/O goroutine")
		f()
	})
}

// startCall runs c's I/O, f, on a pooled goroutine; a panic in f fails c
// with a *scheduler.PanicError, as a panic in a handler does (the
// process gets nil and its message), and is reported.
func (o *IO) startCall(c scheduler.Call, f func()) {
	o.goroutines.Go(func() {
		defer o.recoverPanic(c, "command "+c.Command)
		f()
	})
}

// recoverPanic, deferred on an IO goroutine, turns a panic into c's
// failure (if c is a call) and a report.
func (o *IO) recoverPanic(c scheduler.Call, where string) {
	v := recover()
	if v == nil {
		return
	}
	pe := &scheduler.PanicError{Where: where, Value: v, Stack: debug.Stack()}
	if o.OnPanic != nil {
		o.OnPanic(pe)
	}
	c.Fail(pe) // no completion for a zero Call
}

// tooLargeError is a file, body or output over the IO's cap.
type tooLargeError struct {
	what  string // "file", "body", "output"
	limit int64
}

func (e tooLargeError) Error() string {
	return fmt.Sprintf("%s larger than %s", e.what, sizeString(e.limit))
}

// sizeString writes a byte count the short way: "256 MiB", "1 KiB", "10 bytes".
func sizeString(n int64) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ownedString returns b's bytes as a string without copying them. Only
// for a b that nothing writes to again: the buffers readCapped returns, which
// the commands hand over whole (a copy would double the memory of every
// file read and response body, and was most of the bytes luarun
// allocated per request in the http benchmark).
func ownedString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// readCapped reads r to its end like io.ReadAll, starting with room for
// size bytes and reading at most ioChunk at a time; it stops with ctx's
// cause once ctx is done, and fails with a tooLargeError past limit bytes
// (it reads at most one byte more).
func readCapped(ctx context.Context, r io.Reader, size, limit int64, what string) ([]byte, error) {
	limit = min(limit, math.MaxInt64-1)      // limit+1 below must not overflow
	b := make([]byte, 0, min(size, limit)+1) // +1: EOF is seen without growing
	for {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if int64(len(b)) > limit {
			return nil, tooLargeError{what, limit}
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		end := min(int64(cap(b)), int64(len(b))+ioChunk, limit+1)
		n, err := r.Read(b[len(b):end])
		b = b[:len(b)+n]
		if err == io.EOF {
			if int64(len(b)) > limit {
				return nil, tooLargeError{what, limit}
			}
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// timeoutError is the cause of a context that ran out of its opts.timeout.
type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("timed out after %v", e.d) }

// withTimeout derives from ctx a context that ends after d (if d > 0 and
// not forever) with a timeoutError as its cause.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 || d == forever {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, timeoutError{d})
}
