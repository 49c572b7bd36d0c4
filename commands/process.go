package commands

// process.wait: a goroutine per waiting call watches the awaited process's
// Done channel, the timeout's timer and the waiter's own context, and
// completes the call with whichever comes first.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// Wait completes its call when the process of Args[0] (a scheduler.Handle)
// ends, with WaitResult, or after Args[1] seconds (if given) with nil,
// "timeout" (no timeout if Args[1] is missing, or too large for a timer).
// One goroutine waits per call; it leaves when the process ends, the
// timeout passes or the waiting process is killed.
func Wait(c scheduler.Call) error {
	if len(c.Args) == 0 {
		return errors.New("no process given")
	}
	h, ok := c.Args[0].(scheduler.Handle)
	if !ok {
		return fmt.Errorf("argument 1: process handle expected, got %s", luaType(c.Args[0]))
	}
	d, err := seconds(c.Args, 1)
	if err != nil {
		return err
	}
	select {
	case <-h.Done():
		c.Complete(WaitResult(h))
		return nil
	default:
	}
	go func() {
		var timeout <-chan time.Time
		if d >= 0 && d != forever {
			t := time.NewTimer(d)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-h.Done():
			c.Complete(WaitResult(h))
		case <-timeout:
			c.Complete(payload.Payloads{nil, "timeout"})
		case <-c.Ctx.Done():
			c.Fail(context.Cause(c.Ctx))
		}
	}()
	return nil
}

// WaitResult is what process.wait returns for an ended process: true and
// its results, or false, its error message and, if the error has one
// (a Lua error raised in the process: luaproc.ScriptError), the Lua
// traceback of where it was raised.
func WaitResult(h scheduler.Handle) payload.Payloads {
	res, err := h.Result()
	if err != nil {
		var tb interface{ LuaTraceback() string }
		if errors.As(err, &tb) && tb.LuaTraceback() != "" {
			return payload.Payloads{false, err.Error(), tb.LuaTraceback()}
		}
		return payload.Payloads{false, err.Error()}
	}
	return append(payload.Payloads{true}, res...)
}
