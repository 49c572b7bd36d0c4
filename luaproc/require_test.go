package luaproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// writeFiles writes files (path relative to dir → contents) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
}

// startFile runs entry of the file at path with args and waits for it.
func startFile(t *testing.T, rt *Runtime, path, entry string, args ...any) (payload.Payloads, error) {
	t.Helper()
	s, err := rt.LoadFile(path)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, entry, args...)
	require.NoError(t, err)
	return h.Wait(context.Background())
}

// TestLuaPathOption: Options.LuaPath replaces the default path, and ";;"
// in it stands for the default (the program's directory).
func TestLuaPathOption(t *testing.T) {
	dir, lib := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.lua":  `function main() return require("here"), require("there"), package.path end`,
		"here.lua":  `return "here"`,
		"there.lua": `return "there, next to main"`,
	})
	writeFiles(t, lib, map[string]string{"there.lua": `return "there, in lib"`})

	rt, _, _ := newTestRuntime(t, Options{LuaPath: lib + "/?.lua;;", Allow: []string{"fs"}})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main")
	require.NoError(t, err)
	def := dir + "/?.lua;" + dir + "/?/init.lua"
	assert.Equal(t, payload.Payloads{"here", "there, in lib", lib + "/?.lua;" + def + ";"}, res)

	rt2, _, _ := newTestRuntime(t, Options{LuaPath: lib + "/?.lua", Allow: []string{"fs"}}) // no ";;": no default
	_, err = startFile(t, rt2, filepath.Join(dir, "main.lua"), "main")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Message, "module 'here' not found:\n\tno field package.preload['here']\n\tno file '"+lib+"/here.lua'")
}

// TestRequireWithoutFS: without fs, require loads files inside the
// program's directory only, and never shows what a file outside holds.
func TestRequireWithoutFS(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{
		"lib/inside.lua": `return "inside"`,
		"main.lua": `
local function try(name)
  local ok, v = pcall(require, name)
  return ok and v or v
end
function main() return try("lib.inside"), try("secret"), try("link") end`,
	})
	writeFiles(t, outside, map[string]string{"secret.lua": "the secret line\n"})
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.lua"), filepath.Join(dir, "link.lua")))

	rt, _, _ := newTestRuntime(t, Options{LuaPath: ";;" + outside + "/?.lua"})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main")
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Equal(t, "inside", res[0])
	assert.Contains(t, res[1], "module 'secret' not found:\n\tno field package.preload['secret']\n\tno file '"+dir+"/secret.lua'"+
		"\n\tno file '"+dir+"/secret/init.lua'\n\tnot allowed: "+outside+"/secret.lua: it is outside the program's directory "+dir+
		", and fs is not allowed (run without --sandbox or with --allow fs)")
	// a link out of the directory is outside too, whether or not what it
	// names exists (TestSandboxProbesNothingThroughALink)
	assert.Contains(t, res[2], "module 'link' not found:\n\tno field package.preload['link']\n\tnot allowed: "+dir+"/link.lua: it is outside the program's directory")
	for _, r := range res[1:] {
		assert.NotContains(t, r, "secret line")
		assert.Contains(t, r, "main.lua:3: ", "the position of the require")
	}

	// with fs, the same files load (the secret one fails to compile)
	rt2, _, _ := newTestRuntime(t, Options{LuaPath: ";;" + outside + "/?.lua", Allow: []string{"fs"}})
	res, err = startFile(t, rt2, filepath.Join(dir, "main.lua"), "main")
	require.NoError(t, err)
	assert.Contains(t, res[1], outside+"/secret.lua:1:")
}

// TestSandboxProbesNothingOutside: without fs, require and spawn_file
// answer the same for a file outside the program's directory whether it
// exists or not: a sandboxed script cannot probe the file system.
func TestSandboxProbesNothingOutside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"exists.lua": "return 1"})
	writeFiles(t, dir, map[string]string{"main.lua": `
local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok)
  return e
end
function main(outside)
  package.path = outside .. "/?.lua"
  return err(require, "exists"), err(require, "missing"),
    err(process.spawn_file, outside .. "/exists.lua"), err(process.spawn_file, outside .. "/missing.lua"),
    err(process.spawn_file, "../" .. outside:match("[^/]+$") .. "/exists.lua"),
    err(process.spawn_file, "../" .. outside:match("[^/]+$") .. "/missing.lua")
end`})
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main", outside)
	require.NoError(t, err)
	require.Len(t, res, 6)
	sameRefusal(t, res[0], res[1])
	sameRefusal(t, res[2], res[3])
	sameRefusal(t, res[4], res[5])
}

// TestSpawnFileOfAChunkProgram: a script without main, started by
// spawn_file with no entry, is a program in its chunk, which may spawn.
func TestSpawnFileOfAChunkProgram(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"top.lua":    `function main() return process.wait(process.spawn_file("coord.lua")) end`,
		"coord.lua":  `local ok, v = process.wait(process.spawn_file("helper.lua", nil, 5)); return "coord got " .. v`,
		"helper.lua": `return (...) * 2`,
	})
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "top.lua"), "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, "coord got 10"}, res)
}

// TestRequireCompilesOncePerRuntime: 1,000 processes on every worker
// require the same module at once; it compiles once, runs once in each.
func TestRequireCompilesOncePerRuntime(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"counter.lua": `loads = (loads or 0) + 1; return {id = process.self()}`,
		"main.lua": `
function child(parent)
  local m = require("counter")
  assert(require("counter") == m)
  process.send(parent, loads)
end
function main(n)
  for i = 1, n do process.spawn("child", process.self()) end
  local total = 0
  for i = 1, n do total = total + process.receive() end
  return total
end`,
	})
	rt, _, _ := newTestRuntime(t, Options{Workers: 4})
	s, err := rt.LoadFile(filepath.Join(dir, "main.lua"))
	require.NoError(t, err)
	before := rt.Stats().ScriptsCompiled
	h, err := rt.Start(context.Background(), s, "main", int64(1000))
	require.NoError(t, err)
	res, err := h.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1000)}, res, "each process ran the module once")
	assert.Equal(t, int64(1), rt.Stats().ScriptsCompiled-before, "compiled once")
}

// TestSpawnFromTopLevel: a spawned process may not spawn while its chunk
// runs, so a script without main that spawns from its top level does not
// spawn forever; the process luarun started may, and so may an entry.
func TestSpawnFromTopLevel(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	res, err := runLua(t, rt, "bomb.lua", `
local pids = {}
for i = 1, 3 do pids[i] = process.spawn("worker", i) end
function worker(i) return i * 2 end
local out = {}
for i, pid in ipairs(pids) do
  local ok, err = process.wait(pid)
  out[i] = tostring(ok) .. " " .. err
end
return table.concat(out, "\n")`, "")
	require.NoError(t, err)
	lines := strings.Split(res[0].(string), "\n")
	require.Len(t, lines, 3)
	for _, l := range lines {
		assert.Equal(t, "false bomb.lua:3: process.spawn: spawning belongs in main or another entry, not at the top level of a script: "+
			"every spawned process runs the top level again (as module initialisation) before its entry", l)
	}
	assert.Equal(t, uint64(4), rt.Stats().Started, "no grandchild")

	// From an entry (and a module it requires) spawning works.
	res, err = runLua(t, rt, "entry.lua", `
package.preload.spawner = function() return process.wait(process.spawn("leaf")) end
function leaf() return "leaf" end
function mid() return require("spawner") end
function main() return process.wait(process.spawn("mid")) end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, true}, res)
}

// TestSpawnOfAnUnknownEntry: once a script's chunk has run, spawning an
// entry it does not have fails in the caller; before, the child fails.
func TestSpawnOfAnUnknownEntry(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "entries.lua", `
function worker() end
function main()
  return process.spawn("worker.lua")
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{nil, `entries.lua: unknown entry "worker.lua" (entries: main, worker)`}, res)

	// A script whose chunk has not run to its end yet: the child reports it.
	s, err := rt.LoadString("fresh.lua", `
if ... == "parent" then
  local ok, err = process.wait(process.spawn("nope"))
  return ok, err
end
function nope_not() end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "", "parent")
	require.NoError(t, err)
	res, err = h.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, `fresh.lua: unknown entry "nope" (entries: nope_not)`}, res)
}

// TestApplicationModules: a Lua module and a Go module registered by the
// application, found by require; misuse of the registration is refused.
func TestApplicationModules(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	mod, err := rt.LoadString("greet.lua", `
local M = {}
function M.hello(who) return "hello " .. who end
return M`)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterLuaModule("app.greet", mod))
	require.NoError(t, rt.RegisterGoModule("strs", map[string]Func{
		"upper": func(args []any) ([]any, error) {
			s, _ := args[0].(string)
			return payload.Payloads{strings.ToUpper(s), int64(len(s))}, nil
		},
		"fail":  func([]any) ([]any, error) { return nil, errors.New("no luck") },
		"panic": func([]any) ([]any, error) { panic("oops") },
	}))
	res, err := runLua(t, rt, "use.lua", `
function main()
  local greet = require("app.greet")
  local up, n = strs.upper("abc")
  local nothing, why = require("strs").fail()
  local ok, perr = pcall(strs.panic)
  return greet.hello("ann"), up, n, nothing, why, ok, perr, require("strs") == strs
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"hello ann", "ABC", int64(3), nil, "no luck", false,
		"strs.panic: panic in Go function: oops", true}, res)

	for _, bad := range []error{
		rt.RegisterLuaModule("json", mod),
		rt.RegisterLuaModule("strs", mod),
		rt.RegisterLuaModule("", mod),
		rt.RegisterGoModule("app.greet", nil),
		rt.RegisterGoModule("process", map[string]Func{"x": func([]any) ([]any, error) { return nil, nil }}),
		rt.RegisterGoModule("strs", map[string]Func{"upper": func([]any) ([]any, error) { return nil, nil }}),
		rt.Register("strs.fail", func(Call) error { return nil }),
	} {
		assert.Error(t, bad)
	}
}

// TestRequireWaitsForAnotherTask: a process.all task requiring a module
// that another task is still loading waits for that load, also when the
// load fails (then it sees the failure).
func TestRequireWaitsForAnotherTask(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "tasks.lua", `
package.preload.slow_fail = function()
  time.sleep(0.02)
  error("slow failure")
end
function main()
  local r = {}
  local ok, err = pcall(process.all,
    function() return require("slow_fail") end,
    function() time.sleep(0.005); local ok, e = pcall(require, "slow_fail"); r[2] = e end)
  return ok, err, r[2]
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "slow failure")
	assert.Contains(t, res[2], "module 'slow_fail' failed to load earlier in this process")
}

// TestRequireCycleThroughProcessAll: a module whose chunk requires itself
// from a process.all task is a cycle, not a task waiting for a load that
// waits for it.
func TestRequireCycleThroughProcessAll(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "selfall.lua", `
package.preload.selfish = function()
  return process.all(function() return require("selfish") end)
end
function main() return pcall(require, "selfish") end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, false, res[0])
	assert.Contains(t, res[1], "require cycle: selfish -> selfish")
}

// sameRefusal: the refusals of an existing and a missing path outside the
// program's directory read alike (they tell nothing of what exists).
func sameRefusal(t *testing.T, exists, missing any) {
	t.Helper()
	assert.Equal(t, strings.ReplaceAll(exists.(string), "exists", "X"), strings.ReplaceAll(missing.(string), "missing", "X"))
	assert.Contains(t, exists, "is outside the program's directory")
}
