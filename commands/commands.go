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
