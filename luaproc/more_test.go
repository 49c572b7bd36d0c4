package luaproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/luarun/luarun/lua"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

func TestSpawnFile(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	dir := t.TempDir()
	parent := filepath.Join(dir, "parent.lua")
	child, err := filepath.Abs("testdata/files/child.lua")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sibling.lua"), []byte("return {main = function() return 'sibling' end}"), 0o644))
	require.NoError(t, os.WriteFile(parent, []byte(`
function main(child)
  local _, a = process.wait(process.spawn_file(child, nil, 21))
  local _, b = process.wait(process.spawn_file(child, "named"))
  local _, c = process.wait(process.spawn_file("sibling.lua"))  -- next to this script
  local ok, err = pcall(process.spawn_file, "missing.lua")
  local ok2, err2 = process.spawn_file(child, "nope") -- its entries are known: it ran
  return a, b, c, ok, err:find("missing.lua") ~= nil, ok2, err2
end`), 0o644))
	s, err := rt.LoadFile(parent)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main", child)
	require.NoError(t, err)
	res, err := h.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []any{int64(42), "named entry", "sibling", false, true, nil,
		child + `: unknown entry "nope" (entries: main, named)`}, res)
}

// TestSpawnFileWithoutFS: without fs, process.spawn_file starts scripts
// from the program's directory (the first script's), also from a script
// in a subdirectory, but reads no file outside it: not by an absolute
// path, nor through "..", nor through a symbolic link.
func TestSpawnFileWithoutFS(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	dir, outside := t.TempDir(), t.TempDir()
	write := func(path, src string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	secret := filepath.Join(outside, "secret.lua")
	write(secret, "the secret line\n")
	write(filepath.Join(dir, "lib", "worker.lua"), `
function main() return "worker" end
function up() return process.wait(process.spawn_file("../sibling.lua")) end`)
	write(filepath.Join(dir, "sibling.lua"), `function main() return "sibling" end`)
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link.lua")))
	write(filepath.Join(dir, "main.lua"), `
local function try(path)
  local ok, err = pcall(process.spawn_file, path)
  return ok and "started" or err:gsub("^.-process%.spawn_file: ", "")
end
function main(secret)
  local _, w = process.wait(process.spawn_file("lib/worker.lua"))
  local _, _, s = process.wait(process.spawn_file("lib/worker.lua", "up"))
  return w, s, try(secret), try("../" .. secret:match("[^/]+/[^/]+$")), try("link.lua")
end`)
	s, err := rt.LoadFile(filepath.Join(dir, "main.lua"))
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main", secret)
	require.NoError(t, err)
	res, err := h.Wait(context.Background())
	require.NoError(t, err)
	denied := func(path string) string {
		return path + ": it is outside the program's directory " + dir + ", and fs is not allowed (run without --sandbox or with --allow fs)"
	}
	require.Len(t, res, 5)
	assert.Equal(t, "worker", res[0])
	assert.Equal(t, "sibling", res[1], "a script in a subdirectory starts one beside the first script")
	assert.Equal(t, denied(secret), res[2])
	assert.Contains(t, res[3], "is outside the program's directory")
	assert.Equal(t, denied(filepath.Join(dir, "link.lua")), res[4])
	for _, r := range res[2:] {
		assert.NotContains(t, r, "secret line")
	}

	// a script that is not a file has no directory
	s, err = rt.LoadString("inline.lua", `function main(p) return pcall(process.spawn_file, p) end`)
	require.NoError(t, err)
	h, err = rt.Start(context.Background(), s, "main", filepath.Join(dir, "sibling.lua"))
	require.NoError(t, err)
	res, err = h.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "the program has no directory, and fs is not allowed")
}

func TestLogLinesCarryThePID(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	s, err := rt.LoadString("l.lua", `log.info("job done", "items", 3, "ok", true); log.debug("details")`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "")
	require.NoError(t, err)
	_, err = h.Wait(context.Background())
	require.NoError(t, err)
	out := logs.String()
	assert.Contains(t, out, "INFO job done pid="+itoa(h.PID())+" items=3 ok=true")
	assert.Contains(t, out, "DEBU details pid="+itoa(h.PID()))
}

func itoa(pid scheduler.PID) string { return strings.TrimSpace(lua.LNumber(pid).String()) }

// TestGoPanicEndsOnlyItsProcess: a Go function called from Lua panics;
// that process fails with the panic's message, the runtime goes on.
func TestGoPanicEndsOnlyItsProcess(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("p.lua", "function main() time.sleep(0); return boom() end")
	require.NoError(t, err)
	p := rt.newProcess(s)
	require.NoError(t, p.Init(context.Background(), "main", nil))
	p.L.SetGlobal("boom", p.L.NewFunction(func(*lua.LState) int {
		var m map[string]int
		m["x"] = 1 // a real Go runtime panic
		return 0
	}))
	var out scheduler.StepOutput
	require.NoError(t, p.Step(nil, &out))
	require.Len(t, out.Yields, 1, "time.sleep")
	tag := out.Yields[0].Tag
	out = scheduler.StepOutput{}
	err = stepAsWorker(p, []scheduler.Event{{Type: scheduler.EventYieldComplete, Tag: tag}}, &out)
	require.Error(t, err)
	assert.True(t, p.done)
	assert.Contains(t, err.Error(), "assignment to entry in nil map")
	p.Close()

	// and the runtime still runs processes
	res, err := runLua(t, rt, "ok.lua", "return 1 + 1", "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(2)}, res)
}

// stepAsWorker steps p as a worker does: a panic escaping the step is
// recovered and made the process's error by StepPanicked.
func stepAsWorker(p *luaProcess, events []scheduler.Event, out *scheduler.StepOutput) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.StepPanicked(v)
		}
	}()
	return p.Step(events, out)
}

func TestDeepRecursionIsAnError(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "deep.lua", "local function f(n) return 1 + f(n + 1) end\nreturn f(1)", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stack overflow")
}

// TestStatesShareNothingWritable: the library functions are shared by
// every state, their tables are not; a script that rewrites string,
// math or process, its strings' metatable, or tries to reach the shared
// environment, changes only itself — and what it changes behaves as in
// Lua 5.1 (its strings' methods are its string table's).
func TestStatesShareNothingWritable(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	vandal := `
string.upper = function() return "vandal" end
math.pi = 3
process.self = nil
_G.print = nil
assert(getfenv(pcall) == _G, "getfenv of a built-in answers this state's globals")
assert(getfenv(coroutine.wrap(function() end)) == _G)
local ok, err = pcall(setfenv, pcall, {})
assert(not ok and err:find("cannot change the environment"), err)
assert(getmetatable(math) == nil)
rawset(math, "x", 1)
assert(json.null == json.null)
assert(getmetatable("").__index == string)
getmetatable("").__add = function(a, b) return a .. "+" .. b end
assert(("a" + "b") == "a+b")
assert(string.upper("x") == "vandal")
return ("x"):upper()`
	res, err := runLua(t, rt, "vandal.lua", vandal, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"vandal"}, res, "string methods come from the process's string table")
	res, err = runLua(t, rt, "victim.lua", `return string.upper("x"), ("y"):upper(), math.pi > 3.14, type(process.self), type(print), rawget(math, "x"), getmetatable("").__add`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"X", "Y", true, "function", "function", nil, nil}, res)
}

// TestPcallThreadsDoNotAccumulate: failing protected calls leave nothing
// behind in the process's bookkeeping of pcall coroutines.
func TestPcallThreadsDoNotAccumulate(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("p.lua", `
function main()
  for i = 1, 500 do pcall(error, "x") end
  for i = 1, 500 do pcall(function() return i end) end
  return "ok"
end`)
	require.NoError(t, err)
	p := rt.newProcess(s)
	require.NoError(t, p.Init(context.Background(), "main", nil))
	var out scheduler.StepOutput
	require.NoError(t, p.Step(nil, &out))
	require.Equal(t, scheduler.StatusDone, out.Status)
	assert.Equal(t, payload.Payloads{"ok"}, out.Result)
	assert.Empty(t, p.pthreads)
	assert.LessOrEqual(t, len(p.freeThreads), maxFreeThreads)
	p.Close()
}

// TestReceiveFitsItsCallSite: a blocked receive resumed by a message
// gives its call site what it takes and no more or less, whatever the
// number: none to a statement, the value to an expression, nils padded
// past the three (msg, from, kind), all three to a call's arguments or a
// table constructor (messageArgs makes only what is taken).
func TestReceiveFitsItsCallSite(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	res, err := runLua(t, rt, "fit.lua", `
function echo(main)
  while true do
    local m = process.receive()
    if m == "stop" then return end
    process.send(main, m)
  end
end
function main()
  local me = process.self()
  local e = process.spawn("echo", me)
  local function ask(v) process.send(e, v) end
  local out = {}
  ask(1); process.receive()                       -- a statement
  ask(2); out[#out + 1] = process.receive() + 10   -- one value
  ask(3); local a, b = process.receive()
  out[#out + 1] = a; out[#out + 1] = b == e
  ask(4); local c, d, k, x = process.receive()
  out[#out + 1] = c; out[#out + 1] = d == e; out[#out + 1] = k; out[#out + 1] = x == nil
  ask(5); local all = {process.receive()}
  out[#out + 1] = #all; out[#out + 1] = all[3]
  ask(6); out[#out + 1] = select("#", process.receive())
  ask({7}); out[#out + 1] = process.receive()[1]
  process.send(e, "stop")
  return table.concat((function(t) for i, v in ipairs(t) do t[i] = tostring(v) end return t end)(out), ",")
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"12,3,true,4,true,message,true,3,message,3,7"}, res)
}
