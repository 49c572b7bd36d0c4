package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (path relative to a new temporary directory →
// contents) and returns the directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	return dir
}

// TestProgramOfSeveralFiles: require finds modules next to the program
// wherever luarun is started from; nested directories and init.lua;
// LUA_PATH with ";;"; a module that blocks while it loads.
func TestProgramOfSeveralFiles(t *testing.T) {
	abs, err := filepath.Abs("../scripts/report.lua")
	require.NoError(t, err)
	for _, dir := range []string{"..", t.TempDir(), "/"} {
		r := runLuarunIn(t, dir, nil, "", abs, "3", "1000")
		require.Equal(t, 0, r.code, "from %s: %s", dir, r.stderr)
		assert.Equal(t, "3 workers: 1000 numbers, min 0, max 999, mean 499.50\n", r.stdout, "from %s", dir)
	}

	lib := writeTree(t, map[string]string{"shared/greeting.lua": `return "hello from LUA_PATH"`})
	prog := writeTree(t, map[string]string{
		"app.lua": `
local util = require("lib.util")
local store = require("store")            -- store/init.lua
function main()
  print(util.twice("ab"), store.kind, require("shared.greeting"))
  print(require("slow"))
end`,
		"lib/util.lua":     `return {twice = function(s) return s .. s end}`,
		"store/init.lua":   `return {kind = "init.lua of " .. ...}`,
		"slow.lua":         `time.sleep(0.02); return "loaded after a sleep"`,
		"shared/other.lua": `return "not used"`,
	})
	r := runLuarunIn(t, t.TempDir(), []string{"LUA_PATH=" + lib + "/?.lua;;"}, "", filepath.Join(prog, "app.lua"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "abab\tinit.lua of store\thello from LUA_PATH\nloaded after a sleep\n", r.stdout)

	// without ";;" LUA_PATH replaces the default: lib.util is not found
	r = runLuarunIn(t, "..", []string{"LUA_PATH=" + lib + "/?.lua"}, "", filepath.Join(prog, "app.lua"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "app.lua:2: module 'lib.util' not found:\n\tno field package.preload['lib.util']\n\tno file '"+lib+"/lib/util.lua'\n")
}

// TestRequireErrors: a missing module lists every path tried, a syntax
// error is file:line, a cycle is named, and --sandbox refuses a module
// outside the program's directory without showing it.
func TestRequireErrors(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.lua": "the secret line\n"})
	prog := writeTree(t, map[string]string{
		"missing.lua": `require("nope.mod")`,
		"syntax.lua":  `local m = require("broken")`,
		"broken.lua":  "local a = 1\nlocal b = = 2\n",
		"cycle.lua":   `require("ping")`,
		"ping.lua":    `return require("pong")`,
		"pong.lua":    "local ping = require(\"ping\")\nreturn ping",
		"secret.lua":  `return require("secret")`,
	})
	r := runLuarun(t, "", filepath.Join(prog, "missing.lua"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "luarun: "+prog+"/missing.lua:1: module 'nope.mod' not found:\n"+
		"\tno field package.preload['nope.mod']\n"+
		"\tno file '"+prog+"/nope/mod.lua'\n"+
		"\tno file '"+prog+"/nope/mod/init.lua'\n"+
		"stack traceback:\n")

	r = runLuarun(t, "", filepath.Join(prog, "syntax.lua"))
	assert.Equal(t, 1, r.code)
	assert.Regexp(t, "^luarun: "+regexp.QuoteMeta(prog+"/broken.lua")+`:2: unexpected symbol near '='\n`, r.stderr)

	r = runLuarun(t, "", filepath.Join(prog, "cycle.lua"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "luarun: "+prog+"/pong.lua:1: require cycle: ping -> pong -> ping\n")

	r = runLuarunIn(t, "..", []string{"LUA_PATH=" + outside + "/?.lua"}, "", "--sandbox", filepath.Join(prog, "secret.lua"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "module 'secret' not found:\n\tno field package.preload['secret']\n\tnot allowed: "+
		outside+"/secret.lua: it is outside the program's directory "+prog+
		", and fs is not allowed (run without --sandbox or with --allow fs)")
	assert.NotContains(t, r.stderr, "secret line")
}

// TestSixLineForkBomb: a script without main that spawns from its top
// level. Its children refuse to spawn again, at once, and say why; no
// grandchild starts; every wait answers (none times out).
func TestSixLineForkBomb(t *testing.T) {
	path := writeScript(t, "bomb.lua", `local pids = {}
for i = 1, 4 do pids[i] = process.spawn("worker", i) end
function worker(i) return i * i end
for _, pid in ipairs(pids) do
  local ok, err = process.wait(pid, 30); print(ok, err) -- (not the third value, the traceback)
end
`)
	r := runLuarun(t, "", "--stats", path)
	require.Equal(t, 0, r.code, r.stderr)
	want := "false\t" + path + ":2: process.spawn: spawning belongs in main or another entry, not at the top level of a script: " +
		"every spawned process runs the top level again (as module initialisation) before its entry\n"
	assert.Equal(t, want+want+want+want, r.stdout)
	assert.Contains(t, r.stderr, "luarun: processes: 5 started: 1 returned, 4 failed, 0 killed", "no grandchild")
	t.Logf("the fork bomb ended in %v", r.took)
}

// TestThousandProcessesRequireOneModule: the module compiles once in the
// run (the script and the module: 2 compiles) and runs in every process.
func TestThousandProcessesRequireOneModule(t *testing.T) {
	prog := writeTree(t, map[string]string{
		"shared.lua": `runs = (runs or 0) + 1; return {double = function(x) return 2 * x end}`,
		"main.lua": `
function child(boss, i)
  process.send(boss, require("shared").double(i) + runs - 1)
end
function main()
  local pids = {}
  for i = 1, 1000 do pids[i] = process.spawn("child", process.self(), i) end
  local sum = 0
  for i = 1, 1000 do sum = sum + process.receive() end
  -- a child returns after its send: wait, or the last ones may still run
  -- when main ends, and be cancelled at exit
  for _, pid in ipairs(pids) do assert(process.wait(pid)) end
  print(sum)
end`,
	})
	r := runLuarun(t, "", "--stats", filepath.Join(prog, "main.lua"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "1001000\n", r.stdout)
	assert.Contains(t, r.stderr, "luarun: processes: 1001 started: 1001 returned, 0 failed")
	assert.Contains(t, r.stderr, "; 2 scripts compiled\n")
}
