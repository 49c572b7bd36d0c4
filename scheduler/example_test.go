package scheduler_test

import (
	"context"
	"fmt"
	"time"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// greeter asks Go to look up a name (a command completed later, on another
// goroutine), then ends with a greeting.
type greeter struct{ name string }

func (g *greeter) Init(_ context.Context, method string, in payload.Payloads) error {
	if method != "main" {
		return fmt.Errorf("no entry point %q (have: main)", method)
	}
	g.name = in[0].(string)
	return nil
}

func (g *greeter) Step(events []scheduler.Event, out *scheduler.StepOutput) error {
	for _, ev := range events {
		if ev.Type == scheduler.EventYieldComplete {
			if ev.Error != nil {
				return ev.Error
			}
			out.Status = scheduler.StatusDone
			out.Result = payload.Payloads{"hello, " + ev.Data.(string)}
			return nil
		}
	}
	out.Yield(1, "users.lookup", g.name) // waits for the completion
	return nil
}

func (g *greeter) Close() {}

func Example() {
	reg := new(scheduler.Registry)
	reg.Register("users.lookup", func(c scheduler.Call) error {
		login := c.Args[0].(string)
		go func() { // the handler returns at once; the answer comes later
			time.Sleep(time.Millisecond)
			c.Complete("Ada (" + login + ")")
		}()
		return nil
	})
	s := scheduler.New(scheduler.Options{Workers: 2, Dispatcher: reg})

	h, err := s.Submit(&greeter{}, "main", payload.Payloads{"ada"})
	if err != nil {
		panic(err)
	}
	result, err := h.Wait(context.Background())
	fmt.Println(result[0], err)

	_, err = s.Submit(&greeter{}, "other", payload.Payloads{"x"})
	fmt.Println(err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(s.Shutdown(ctx))
	// Output:
	// hello, Ada (ada) <nil>
	// no entry point "other" (have: main)
	// <nil>
}
