// An application embedding luarun through luaproc alone (no other
// package of luarun's): every main call of the API, each error handled.
// tests/install_test.go builds it against a module zip of the tree and
// checks what it prints.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/luarun/luarun/luaproc"
)

type requestKey struct{}

const appLua = `
local shout = require("app.shout")

function main(inbox, who)
  local greeting, req = app.greeting(who)
  local _, err = app.lookup("missing")
  process.send(inbox, shout.shout(greeting) .. " " .. req .. " / " .. err)
  local half = process.call(inbox, "half of 42?", math.huge)
  local msg, from, kind, call = process.receive()
  process.reply(call, "pong " .. msg)
  local thanks = process.receive()
  return thanks, mathx.double(half.n)
end

function forever()
  app.greeting("nobody")     -- reaches a command first
  process.receive()          -- then waits for a message that never comes
end
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embedder:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer rt.Shutdown(ctx)

	// A command answered later, from another goroutine, with a value of
	// the context the process was started with.
	var pending sync.WaitGroup
	greeted := make(chan struct{}, 2)
	err = rt.Register("app.greeting", func(c luaproc.Call) error {
		who, _ := c.Args[0].(string)
		req, _ := c.Ctx.Value(requestKey{}).(string)
		pending.Add(1)
		go func() {
			defer pending.Done()
			c.Complete("hello "+who, req)
			greeted <- struct{}{}
		}()
		return nil
	})
	if err != nil {
		return err
	}
	err = rt.Register("app.lookup", func(c luaproc.Call) error {
		c.Fail(fmt.Errorf("no row %v", c.Args[0]))
		return nil
	})
	if err != nil {
		return err
	}
	err = rt.RegisterGoModule("mathx", map[string]luaproc.Func{
		"double": func(args []any) ([]any, error) {
			n, _ := args[0].(int64)
			return []any{2 * n}, nil
		},
	})
	if err != nil {
		return err
	}
	shout, err := rt.LoadString("shout.lua", `return {shout = function(s) return string.upper(s) .. "!" end}`)
	if err != nil {
		return err
	}
	if err := rt.RegisterLuaModule("app.shout", shout); err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "embedder")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.lua")
	if err := os.WriteFile(path, []byte(appLua), 0o644); err != nil {
		return err
	}
	script, err := rt.LoadFile(path)
	if err != nil {
		return err
	}
	inbox, err := rt.NewInbox()
	if err != nil {
		return err
	}
	defer inbox.Close()

	reqCtx := context.WithValue(ctx, requestKey{}, "req-7")
	h, err := rt.Start(reqCtx, script, "main", inbox.PID(), "embedder")
	if err != nil {
		return err
	}
	msg, err := inbox.Receive(ctx) // process.send
	if err != nil {
		return err
	}
	fmt.Println("message:", msg.Value, msg.From == h.PID())
	call, err := inbox.Receive(ctx) // process.call
	if err != nil {
		return err
	}
	fmt.Println(call.Kind+":", call.Value)
	if err := inbox.Reply(call, map[string]any{"n": 21}); err != nil {
		return err
	}
	answer, err := inbox.Call(ctx, h.PID(), "ping") // Lua answers with process.reply
	if err != nil {
		return err
	}
	fmt.Println("answer:", answer)
	if err := inbox.Send(h.PID(), "thanks"); err != nil {
		return err
	}
	results, err := h.Wait(ctx)
	fmt.Println("results:", results, err)

	// The end of Start's context kills the process, with its cause.
	procCtx, stop := context.WithCancelCause(reqCtx)
	defer stop(nil)
	h, err = rt.Start(procCtx, script, "forever")
	if err != nil {
		return err
	}
	<-greeted
	<-greeted
	stop(errors.New("the client went away"))
	_, err = h.Wait(ctx)
	var killed *luaproc.KilledError
	fmt.Println("cancelled:", err, errors.As(err, &killed) && killed.Cause == context.Cause(procCtx))
	pending.Wait()

	st := rt.Stats()
	fmt.Printf("stats: started %d, returned %d, killed %d, failed %d, live %d\n", st.Started, st.Returned, st.Killed, st.Failed, st.Live)
	if err := rt.Shutdown(ctx); err != nil {
		return err
	}
	_, err = rt.Start(ctx, script, "main")
	fmt.Println("after shutdown:", errors.Is(err, luaproc.ErrClosed))
	return nil
}
