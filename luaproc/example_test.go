package luaproc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/luarun/luarun/luaproc"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// An application embeds luarun: it registers a command that Lua calls as
// db.query, starts a Lua process, talks to it through an Inbox, waits
// for its result and shuts down.
func Example() {
	rt, err := luaproc.New(luaproc.Options{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rt.Shutdown(ctx)
	}()

	// db.query yields the Lua process; the handler answers later, from
	// another goroutine, without holding a worker.
	rt.Register("db.query", func(c scheduler.Call) error {
		sql, _ := c.Args[0].(string)
		go func() {
			rows := []any{map[string]any{"name": "ann", "sql": sql}}
			c.Complete(payload.Payloads{rows})
		}()
		return nil
	})

	script, err := rt.LoadString("greeter.lua", `
function main(inbox)
  local rows = db.query("select name from users")
  process.send(inbox, "hello " .. rows[1].name)
  local msg = process.receive()        -- waits for Go's reply
  return "got " .. msg, #rows
end`)
	if err != nil {
		fmt.Println(err)
		return
	}
	inbox, _ := rt.NewInbox()
	defer inbox.Close()
	h, _ := rt.Start(context.Background(), script, "main", int64(inbox.PID()))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, _ := inbox.Receive(ctx)
	fmt.Println(m.Value)
	inbox.Send(h.PID(), "bye") // from the inbox's PID, so Lua could reply

	res, err := h.Wait(ctx)
	fmt.Println(res, err)
	// Output:
	// hello ann
	// [got bye 1] <nil>
}
