package luaproc

// A script that only defines global functions is not run per process
// (scriptglobals.go): each process must still see what running it
// would have given it, and nothing of another process's.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

const definitionsLua = `
function get() return x end
function set(v) x = v end
function print(...) return "mine" end
function main(peer)
  assert(main == main and rawget(_G, "get") == get and getfenv(get) == _G)
  assert(package.loaded._G == _G and getfenv(0) == _G and getfenv(1) == _G)
  assert(print() == "mine", "a definition shadows the built-in")
  local defined = {}
  for k, v in pairs(_G) do
    if type(v) == "function" and debug.getinfo(v, "S").source == "@defs.lua" then defined[#defined + 1] = k end
  end
  table.sort(defined)
  assert(table.concat(defined, " ") == "get main print set", table.concat(defined, " "))
  if peer then -- the second process: sees nothing of the first's
    return get(), getfenv(set) == _G, process.call(peer, "go")
  end
  set("first")
  setfenv(set, {})
  get = nil
  local _, _, _, call = process.receive()
  process.reply(call, "done")
  return x, get
end`

// TestDefinitionsOnlyScriptGivesEachProcessItsOwn: two processes of a
// script of definitions: each has its own functions (setfenv and
// reassigning one stay in the process), pairs(_G) lists them,
// package.loaded._G is _G, a definition shadows a built-in.
func TestDefinitionsOnlyScriptGivesEachProcessItsOwn(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("defs.lua", definitionsLua)
	require.NoError(t, err)
	_, run := s.globalsFor(rt.template())
	require.False(t, run, "the script is definitions only: its chunk is not run")
	ctx := context.Background()
	first, err := rt.Start(ctx, s, "main")
	require.NoError(t, err)
	second, err := rt.Start(ctx, s, "main", int64(first.PID()))
	require.NoError(t, err)
	res, err := second.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, "done"}, res)
	res, err = first.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []any{"first", nil}, res, "x set through set, get removed")
}

// TestDefinitionsOnlyScriptAfterRegister: a command registered after
// the script's processes started is there for the next ones (the
// template, and the script's globals over it, are made again).
func TestDefinitionsOnlyScriptAfterRegister(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	const src = `function main() return app ~= nil and app.hello ~= nil end`
	res, err := runLua(t, rt, "defs.lua", src, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false}, res)
	require.NoError(t, rt.Register("app.hello", func(c Call) error { c.Complete("hi"); return nil }))
	res, err = runLua(t, rt, "defs.lua", src, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true}, res)
}
