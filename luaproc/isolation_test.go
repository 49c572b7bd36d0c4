package luaproc

// Regression tests from a review of the shared built-ins and recycled
// states: each case was a reproduced leak between processes (or a crash).

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// The string library's __index field pointed at the shared table itself.
func TestSharedStringTableUnreachable(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "a.lua", `return string.__index == nil, ("").__index == nil`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, true}, res)
	// Concurrent writers to anything reachable must not crash the runtime.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := runLua(t, rt, "w.lua", `for i = 1, 200 do string["k" .. i] = i; math["k" .. i] = i end return true`, "", int64(i))
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	res, err = runLua(t, rt, "b.lua", `return string.k1, math.k1`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{nil, nil}, res, "another process's writes are not visible")
}

// json.null is shared by every state: its metatable is locked.
func TestJSONNullLocked(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "a.lua", `
local ok, err = pcall(setmetatable, json.null, {__index = function() return "hijacked" end})
return ok, getmetatable(json.null)`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, "json.null"}, res)
}

// Per-type metatables (numbers, functions...) do not survive recycling.
func TestRecycledStateForgetsTypeMetatables(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	for range 20 {
		_, err := runLua(t, rt, "a.lua", `
setmetatable(0, {__index = {secret = "from A"}})
setmetatable(print, {__index = {secret = "fn from A"}})
return true`, "")
		require.NoError(t, err)
		res, err := runLua(t, rt, "b.lua", `return getmetatable(1), getmetatable(type), getmetatable(true)`, "")
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{nil, nil, nil}, res)
	}
}

// setfenv found its target by a different count of levels than
// gopher-lua's setfenv (tail calls), and refused level 0. Levels are Lua
// 5.1's: g 1, the call x made by a tail call 2, main 3, boot 4.
func TestSetfenvGuard(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "a.lua", `
local secret = {owner = "process A"}
local function g() setfenv(4, secret) end -- level 4: boot, past a tail call
local function x() return g() end
function main() x() end`, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot change the environment of a luarun built-in")
	res, err := runLua(t, rt, "b.lua", `
local function g() return getfenv(3) end
function main()
  local e = g()
  return e == _G, rawget(e, "owner")
end`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, nil}, res)
	res, err = runLua(t, rt, "z.lua", `return (pcall(setfenv, 0, setmetatable({}, {__index = _G})))`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true}, res, "level 0 is the coroutine's own environment")
}

// A task's coroutine is the process's own "main thread": coroutine.running
// answers nil in it, in process.all's functions and in pcall there, so a
// script cannot get hold of it (and resume it from another task); in a
// coroutine of the script's it answers that coroutine.
func TestTaskCoroutinesAreNotExposed(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "s.lua", `
function main()
  local in_all = process.all(function() return coroutine.running() == nil end)
  local co
  co = coroutine.create(function() return coroutine.running() == co end)
  local _, own = coroutine.resume(co)
  return coroutine.running() == nil, in_all, select(2, pcall(coroutine.running)) == nil, own
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, true, true, true}, res)
}

// Entry points are judged against the template the process started with.
func TestRegisterWhileAChunkRuns(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	s, err := rt.LoadString("r.lua", `local _ = print; local _ = pairs; log.info("chunk runs"); process.receive(); function worker() end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "wokrer")
	require.NoError(t, err)
	logs.waitFor(t, "chunk runs") // not a 20 ms sleep: the chunk may not have started by then
	require.NoError(t, rt.Register("db.query", func(c Call) error { return nil }))
	require.NoError(t, rt.Send(h.PID(), "go"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = h.Wait(ctx)
	assert.EqualError(t, err, `r.lua: unknown entry "wokrer" (did you mean 'worker'? entries: worker)`)
}

// TestArgIsEachProcesss: arg, made when a process first reads it, holds
// that process's own arguments, also on a recycled state, and a process
// that never reads it gets none.
func TestArgIsEachProcesss(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	for i := range 10 {
		res, err := runLua(t, rt, "a.lua", `local n = ... ; arg[1] = "changed"; arg.extra = true; return n`, "", int64(i))
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{int64(i)}, res)
		res, err = runLua(t, rt, "b.lua", `return rawget(_G, "arg") == arg, arg[0], arg[1], arg.extra, #arg`, "", "own")
		require.NoError(t, err)
		require.Equal(t, payload.Payloads{true, "b.lua", "own", nil, int64(1)}, res)
	}
}
