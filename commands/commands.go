// Package commands holds luarun's Go-side command handlers: the code that
// runs when a Lua process makes a blocking call. A handler gets a
// scheduler.Call, returns at once, and completes the call through its
// Completer — now, or later from any goroutine. Nothing here holds a
// worker while it waits.
//
// A handler's result is what the Lua call returns: a payload.Payloads is
// several values, any other payload value one value, nil none; a failed
// call (Fail, or a returned error) returns nil and the error's message.
//
// Register installs the built-in handlers on a registry:
//
//	time.sleep    (seconds)            → nothing, after the time passed
//	process.wait  (handle, timeout)    → true, results... | false, err | nil, "timeout"
//
// NewIO makes the I/O commands, which IO.Register installs (the Lua layer
// decides whether a runtime may use them):
//
//	fs.read      (path)                    → the contents (a string, any bytes)
//	fs.write     (path, data)              → true (atomic: temp file + rename)
//	fs.list      (dir)                     → {names...}, sorted
//	fs.stat      (path)                    → {size=, mtime=, is_dir=, mode=}
//	fs.mkdir     (path [, parents])        → true
//	fs.remove    (path)                    → true (a file or an empty directory)
//	fs.rename    (from, to)                → true
//	fs.append    (path, data)              → true (made if missing)
//	http.get     (url [, opts])            → {status=, body=, headers={name=value}, url=}
//	http.request (req)                     → the same
//	exec.run     (cmd, {args...} [, opts]) → {code=, stdout=, stderr=}
//
// with http.get's opts = {headers={name=value}, timeout=seconds,
// follow_redirects=true|false|n}, req = {method= (GET by default), url=,
// headers=, body=, timeout=, follow_redirects=} (url in the response: the
// final URL, after redirects), and
// exec.run's opts = {stdin=, dir=, timeout=seconds, env={NAME=value},
// clear_env=bool} (env adds to luarun's environment, false removing a
// variable; clear_env starts from an empty one).
//
// Each fails with a message naming the command and its subject ("fs.read
// /x: no such file or directory", "http.get http://h/: connection
// refused", "exec.run sleep: timed out after 1s"). An HTTP status other
// than 2xx and a non-zero exit code are results, not failures. Response
// header names are lowercased; HTTP requests time out after 30 seconds
// unless opts.timeout says otherwise. A process killed during a call has
// its request aborted, its file read or write stopped (a write's temp file
// removed), or its child (and the child's process group) killed; on Unix
// a command's background children are killed when it exits, too.
//
// What a call brings into memory is capped at maxDataBytes, 256 MiB: the
// file fs.read reads (only regular files are read), an HTTP response body,
// and each of exec.run's stdout and stderr. More fails the call ("fs.read
// /x: file larger than 256 MiB", "http.get <url>: body larger than 256
// MiB", "exec.run yes: output larger than 256 MiB"; the command is killed).
//
// Arguments are read the Lua way (args.go): a number is accepted where a
// string is expected, and errors name Lua types ("string expected, got
// table"). A duration in seconds too large for a timer (math.huge) means
// none: time.sleep(math.huge) sleeps until the process is killed, and
// timeout=math.huge sets no deadline.
//
// Non-blocking calls (process.spawn, process.send, json, log) are not
// commands: luaproc runs them in place, without a yield.
package commands

import (
	"github.com/luarun/luarun/scheduler"
)

// Register installs the built-in handlers on reg.
func Register(reg *scheduler.Registry) {
	reg.Register("time.sleep", Sleep)
	reg.Register("process.wait", Wait)
}
