package commands

// The I/O commands (fs.*, http.*, exec.*) share one design: the handler
// checks its arguments on the worker and returns at once (an argument
// error fails the call there); the I/O itself runs on a goroutine of its
// own that ends with c.Complete or c.Fail. That goroutine watches c.Ctx,
// which is done when the calling process is killed or ends: an HTTP
// request is made with that context, a child process is started with it,
// so a kill aborts the work and the goroutine leaves. Its completion is
// then dropped by the scheduler, which is harmless.
//
// Errors read as "<command> <subject>: <what went wrong>", e.g.
// "fs.read /x/y: no such file or directory": the wrappers Go puts around
// system errors (*fs.PathError, *url.Error, *net.OpError...) are peeled
// off, since the command and its subject already say what was attempted.
//
// An IO is not a global: the Lua layer decides which modules a runtime
// allows and registers an IO's commands itself; Close lets the runtime's
// shutdown leave no HTTP connection goroutine behind.

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/luarun/luarun/scheduler"
)

// IO holds what the I/O commands share: an HTTP client (connection reuse,
// sane timeouts) and a bound on concurrent file operations.
type IO struct {
	transport *http.Transport
	client    *http.Client
	// fsSlots bounds the file operations in flight: each blocks an OS
	// thread, and thousands of processes reading at once must not make
	// thousands of threads.
	fsSlots chan struct{}
	// goroutines runs every call's I/O (goroutines.go).
	goroutines goroutinePool
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
		client:  &http.Client{Transport: t},
		fsSlots: make(chan struct{}, max(16, 4*runtime.GOMAXPROCS(0))),
	}
}

// Register installs fs.read, fs.write, fs.list, http.get, http.request and
// exec.run on reg.
func (o *IO) Register(reg *scheduler.Registry) {
	reg.Register("fs.read", o.fsRead)
	reg.Register("fs.write", o.fsWrite)
	reg.Register("fs.list", o.fsList)
	reg.Register("http.get", o.httpGet)
	reg.Register("http.request", o.httpRequest)
	reg.Register("exec.run", o.execRun)
}

// Close closes the idle HTTP connections (and so their goroutines).
// Requests still in flight keep theirs until they end; the IO stays usable.
func (o *IO) Close() {
	o.goroutines.Close()
	o.transport.CloseIdleConnections()
}

// argString reads Args[i] as a string ([]byte is accepted too).
func argString(args []any, i int) (string, error) {
	if i < len(args) {
		switch x := args[i].(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	}
	return "", fmt.Errorf("argument %d: string expected, got %s", i+1, typeName(args, i))
}

// argTable reads Args[i] as a table with string keys: nil or missing is
// nil, and an empty list (what Lua's {} arrives as) an empty table.
func argTable(args []any, i int) (map[string]any, error) {
	if i >= len(args) || args[i] == nil {
		return nil, nil
	}
	m, err := asTable(args[i])
	if err != nil {
		return nil, fmt.Errorf("argument %d: %w", i+1, err)
	}
	return m, nil
}

// asTable converts a payload table with string keys to a map[string]any.
func asTable(v any) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case []any:
		if len(x) == 0 {
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("table with string keys expected, got a list")
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			s, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("table with string keys expected, got key %v (%T)", k, k)
			}
			m[s] = e
		}
		return m, nil
	default:
		return nil, fmt.Errorf("table expected, got %T", v)
	}
}

// optString reads the string field key of an options table ("" if absent).
func optString(opts map[string]any, key string) (string, error) {
	switch x := opts[key].(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	default:
		return "", fmt.Errorf("%s: string expected, got %T", key, x)
	}
}

// optTimeout reads the field "timeout" (seconds) of an options table: def
// if absent; it must be positive.
func optTimeout(opts map[string]any, def time.Duration) (time.Duration, error) {
	v, ok := opts["timeout"]
	if !ok || v == nil {
		return def, nil
	}
	d, err := seconds([]any{v}, 0)
	if err != nil {
		return 0, fmt.Errorf("timeout: seconds expected, got %T", v)
	}
	if d <= 0 {
		return 0, fmt.Errorf("timeout: must be positive, got %v", v)
	}
	return d, nil
}

// scalarString reads a string, or a number as Lua's tostring writes it.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', 14, 64), true
	}
	return "", false
}

func typeName(args []any, i int) string {
	if i >= len(args) {
		return "no value"
	}
	if args[i] == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", args[i])
}

// timeoutError is the cause of a context that ran out of its opts.timeout.
type timeoutError struct{ d time.Duration }

func (e timeoutError) Error() string { return fmt.Sprintf("timed out after %v", e.d) }

// withTimeout derives from ctx a context that ends after d (if d > 0) with
// a timeoutError as its cause.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, timeoutError{d})
}
