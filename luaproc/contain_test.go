package luaproc

// Hostile or broken scripts are contained (issue 27, shared/LUA_API.md
// "Hostile or broken scripts"): yields where they cannot be, blocking
// calls inside a receive{match=} function.

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestYieldAcrossGoCallInProcess: coroutine.yield inside a metamethod, a
// sort comparator, a gsub callback, a load reader or a pairs loop raises
// Lua 5.1's error, which pcall catches, in the process's code, in a
// coroutine of the script's and in pcall's coroutine. Before: the value
// was dropped ("true true"), "register underflow", "can not yield from
// outside of a coroutine", a Go nil-pointer panic.
func TestYieldAcrossGoCallInProcess(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "y.lua", `
local cases = {
  function() local t = setmetatable({}, {__index = function() coroutine.yield(1) return 5 end}) return t.x end,
  function() return tostring(setmetatable({}, {__tostring = function() coroutine.yield(1) return "s" end})) end,
  function() local t = {3, 2, 1} table.sort(t, function(a, b) coroutine.yield(1) return a < b end) return t[1] end,
  function() return (string.gsub("abc", "%w", function(c) coroutine.yield(1) return c end)) end,
  function() return load(function() coroutine.yield(1) end) end,
  function() local t = setmetatable({}, {__index = function() coroutine.yield(1) end}) for _ in pairs({1}) do local _ = t.x end end,
  function() return setmetatable({}, {__add = function() coroutine.yield(1) return 3 end}) + 1 end,
}
local out = {}
for i, f in ipairs(cases) do
  local co = coroutine.create(function() return pcall(f) end)
  local ok, caught, msg = coroutine.resume(co)
  local ok2, msg2 = coroutine.resume(co)
  local wrapped = {pcall(coroutine.wrap(f))}
  out[#out + 1] = table.concat({i, tostring(ok), tostring(caught), msg, coroutine.status(co), tostring(ok2), msg2,
    tostring(wrapped[1]), tostring(wrapped[2])}, "|")
end
return table.concat(out, "\n")`, "")
	require.NoError(t, err)
	const msg = "attempt to yield across metamethod/C-call boundary"
	var want string
	for i := 1; i <= 7; i++ {
		if i > 1 {
			want += "\n"
		}
		want += string(rune('0'+i)) + "|true|false|" + msg + "|dead|false|can not resume a dead thread|false|" + msg
	}
	assert.Equal(t, payload.Payloads{want}, res)
}

// TestBlockingInsideMatchFunction: process.receive (with a timeout or
// none, or 0), process.wait, process.call and time.sleep inside a
// receive{match=} function raise an error naming the match function,
// which pcall catches; the mailbox is left as it was. Both where the
// match runs: at the receive, over the waiting messages (inline), and
// when a message comes while the receive waits (aside, outside any
// step). Before: process.receive(0) there was an "index out of range"
// panic that pcall did not catch and that ended the process; the others
// raised "cannot block outside a process step" or "inside a Go
// function", which named nothing the script wrote.
func TestBlockingInsideMatchFunction(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "m.lua", `
local M = {}
function M.sender(pid, n)
  for i = 1, n do process.receive() process.send(pid, "late" .. i) end
end
local bodies = {
  {"process.receive", function() process.receive(0) return true end},
  {"process.receive", function() return process.receive(0.01) end},
  {"process.receive", function() return process.receive() end},
  {"process.wait", function() return process.wait(process.self(), 0) end},
  {"process.call", function() return process.call(process.self(), 1, 0.01) end},
  {"time.sleep", function() time.sleep(0) return true end},
}
function M.main()
  local out = {}
  local sender = process.spawn("sender", process.self(), #bodies)
  for i, b in ipairs(bodies) do
    process.send(process.self(), "early" .. i)
    time.sleep(0.001) -- the message is in the mailbox once this returns
    local ok, err = pcall(process.receive, {match = b[2], timeout = 0})
    out[#out + 1] = tostring(ok) .. "|" .. err
    out[#out + 1] = process.receive(0) -- still there
    process.send(sender, "go")
    ok, err = pcall(process.receive, {match = b[2], timeout = 10})
    out[#out + 1] = tostring(ok) .. "|" .. err
    out[#out + 1] = process.receive(10) -- still there
  end
  return table.concat(out, "\n")
end
return M`, "main")
	require.NoError(t, err)
	var want string
	for i, name := range []string{"process.receive", "process.receive", "process.receive", "process.wait", "process.call", "time.sleep"} {
		n, line := string(rune('1'+i)), strconv.Itoa(7+i) // the match function's line
		want += "false|m.lua:" + line + ": " + name + ": cannot be called inside a receive{match=} function\nearly" + n + "\n"
		want += "false|m.lua:" + line + ": " + name + ": cannot be called inside a receive{match=} function\nlate" + n + "\n"
	}
	assert.Equal(t, payload.Payloads{want[:len(want)-1]}, res)
}

// panicWriter is a Stdout whose Write panics on a line holding "boom":
// a Go panic inside a built-in (print), on the process's goroutine.
type panicWriter struct{ syncBuffer }

func (w *panicWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "boom") {
		panic("writer exploded")
	}
	return w.syncBuffer.Write(p)
}

// TestGoPanicInBuiltinIsInternalError: a Go panic inside a built-in,
// called in a pcall inside a coroutine, ends only that process, with
// "internal error: ...": pcall does not catch it (internal.go says why),
// the crash report names the process and carries the Go stack, and the
// runtime goes on — the next process prints (print's lock was not left
// held). Before: pcall caught it as a Lua error ("writer exploded") and
// the process went on; print's mutex stayed locked, so every later
// print in the runtime hung.
func TestGoPanicInBuiltinIsInternalError(t *testing.T) {
	out := &panicWriter{}
	rt, _, logs := newTestRuntime(t, Options{Stdout: out})
	_, err := runLua(t, rt, "p.lua", `
local co = coroutine.wrap(function() return pcall(print, "boom") end)
local ok = co()
print("pcall caught it", ok)
return "went on"`, "")
	require.Error(t, err)
	assert.Equal(t, "internal error: writer exploded", err.Error())
	assert.Contains(t, logs.String(), "process crashed: internal error: writer exploded")
	assert.Contains(t, logs.String(), "luaproc.(*panicWriter).Write", "the crash report has the Go stack")
	res, err := runLua(t, rt, "q.lua", `print("fine") return 1`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(1)}, res)
	assert.Equal(t, "fine\n", out.String())
}

// panicError is an error whose message panics.
type panicError struct{}

func (panicError) Error() string { panic("message exploded") }

// TestGoPanicInStepIsInternalError: a Go panic in a step outside the
// Lua code (here: turning a command's failure into Lua values) ends the
// process with "internal error: ..." and a crash report with the stack.
// Before: "panic in process N: ..." (from the scheduler) and no report.
func TestGoPanicInStepIsInternalError(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	require.NoError(t, rt.Register("test.fail", func(c Call) error {
		c.Fail(panicError{})
		return nil
	}))
	_, err := runLua(t, rt, "s.lua", `return pcall(test.fail)`, "")
	require.Error(t, err)
	assert.Equal(t, "internal error: message exploded", err.Error())
	assert.Contains(t, logs.String(), "process crashed: internal error: message exploded")
	assert.Contains(t, logs.String(), "luaproc.panicError.Error")
	res, err := runLua(t, rt, "t.lua", `return 2`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(2)}, res)
}

// TestStackOverflowStillCatchable: gopher-lua's call-stack overflow was
// a Go panic; it is a Lua error now (lua/_state.go), which pcall catches
// although Go panics are not.
func TestStackOverflowStillCatchable(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "o.lua", `
local function f() return 1 + f() end
local ok, msg = pcall(f)
return ok, msg`, "")
	require.NoError(t, err)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "stack overflow")
}

// TestGoPanicInAllTaskEndsProcess: a Go panic inside a built-in called
// by one of process.all's functions ends the whole process with
// "internal error: ...", as one in the main task does; pcall around
// process.all does not catch it. Before: the task's resume recovered it
// as that task's error, process.all raised it after the others
// finished, and pcall caught it as a Lua error: the process went on
// past the broken invariant internal.go says it must not.
func TestGoPanicInAllTaskEndsProcess(t *testing.T) {
	out := &panicWriter{}
	rt, _, logs := newTestRuntime(t, Options{Stdout: out})
	_, err := runLua(t, rt, "a.lua", `
local ok, err = pcall(process.all, function() print("boom") end, function() return 2 end)
print("went on", ok, err)
return "went on"`, "")
	require.Error(t, err)
	assert.Equal(t, "internal error: writer exploded", err.Error())
	assert.Contains(t, logs.String(), "process crashed: internal error: writer exploded")
	assert.NotContains(t, out.String(), "went on")
	res, err := runLua(t, rt, "b.lua", `print("fine") return 1`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(1)}, res)
}
