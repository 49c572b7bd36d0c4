package luaproc

import (
	"context"

	lua "github.com/yuin/gopher-lua"
)

// luaCtx is the context of every coroutine a process runs. gopher-lua
// checks it between any two instructions (so Kill stops a busy loop); its
// Done channel is fetched once, so that check is one channel poll. It
// also carries the process, for the shared module functions (procOf).
type luaCtx struct {
	context.Context // the process's scheduler context
	p               *luaProcess
	done            <-chan struct{}
}

type procKey struct{}

func newLuaCtx(ctx context.Context, p *luaProcess) *luaCtx {
	return &luaCtx{Context: ctx, p: p, done: ctx.Done()}
}

func (c *luaCtx) Done() <-chan struct{} { return c.done }

// Value answers procKey (for coroutines a script makes, whose contexts
// are children of this one) and delegates the rest.
func (c *luaCtx) Value(key any) any {
	if key == (procKey{}) {
		return c.p
	}
	return c.Context.Value(key)
}

// paddedResume is coroutine.resume for scripts: it fits the values to
// what the suspended call wants (see fitValues) and resumes.
func paddedResume(rawResume lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		th := L.CheckThread(1)
		if n := wantedResults(th); n >= 0 {
			for L.GetTop()-1 < n {
				L.Push(lua.LNil)
			}
			L.SetTop(n + 1)
		}
		return rawResume(L)
	}
}
