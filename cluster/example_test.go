package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/luarun/luarun/cluster"
	"github.com/luarun/luarun/luaproc"
)

// Two runtimes of one Go program join a cluster (on a NATS server it
// starts itself), and a Go inbox on one calls a Lua process on the other.
func Example() {
	srv, err := cluster.StartServer("127.0.0.1:0") // or nats-server -js
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	start := func(name string) (*luaproc.Runtime, func()) {
		node, err := cluster.Join(ctx, cluster.Config{URL: srv.URL(), Name: name})
		if err != nil {
			panic(err)
		}
		rt, err := luaproc.New(luaproc.Options{Cluster: node, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			panic(err)
		}
		return rt, func() { rt.Shutdown(ctx); node.Close() }
	}
	alpha, stopAlpha := start("alpha")
	defer stopAlpha()
	beta, stopBeta := start("beta")
	defer stopBeta()

	s, _ := beta.LoadString("greeter.lua", `
function greeter()
  assert(process.register("greeter"))
  while true do
    local name, _, _, call = process.receive()
    process.reply(call, "hello " .. name .. " from " .. process.node())
  end
end`)
	if _, err := beta.Start(context.Background(), s, "greeter"); err != nil {
		panic(err)
	}
	inbox, _ := alpha.NewInbox()
	var greeter any
	for greeter == nil { // the name reaches alpha's copy of the registry
		if pid, ok := alpha.Whereis("greeter"); ok {
			greeter = pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	pid, _ := alpha.Whereis("greeter")
	reply, err := inbox.Call(ctx, pid, "alpha")
	fmt.Println(reply, err)
	// Output: hello alpha from beta <nil>
}
