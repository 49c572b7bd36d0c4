//go:build unix

package luaproc

// The toolbox a script expects (issue 31, item 5), driven from Lua as a
// user would: exec.run's env, http's follow_redirects and final url,
// exec.start's streams, pool.map.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestExecRunEnv: env adds to luarun's environment (false removes a
// variable), clear_env starts from an empty one; bad entries raise.
func TestExecRunEnv(t *testing.T) {
	t.Setenv("LUARUN_TEST_INHERITED", "kept")
	t.Setenv("LUARUN_TEST_DROPPED", "there")
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"exec"}})
	src := `
local function show(opts)
  local r = assert(exec.run("sh", {"-c", 'echo "$LUARUN_TEST_INHERITED|$LUARUN_TEST_DROPPED|$GREETING|$N"'}, opts))
  return (r.stdout:gsub("\n$", ""))
end
function main()
  local out = {
    show(nil),
    show({env = {GREETING = "hello world", N = 5, LUARUN_TEST_DROPPED = false}}),
    show({env = {LUARUN_TEST_INHERITED = "replaced"}}),
    show({clear_env = true, env = {GREETING = "alone"}}),
  }
  local r = assert(exec.run("/usr/bin/env", {}, {clear_env = true}))
  out[#out + 1] = "[" .. r.stdout .. "]"
  local ok, err = pcall(exec.run, "true", {}, {env = {["A=B"] = "x"}})
  out[#out + 1] = err
  ok, err = pcall(exec.run, "true", {}, {env = {A = {}}})
  out[#out + 1] = err
  ok, err = pcall(exec.run, "true", {}, {env = "A=B"})
  out[#out + 1] = err
  return table.concat(out, "\n")
end`
	res, err := runLua(t, rt, "env.lua", src, "main")
	require.NoError(t, err)
	want := `kept|there||
kept||hello world|5
replaced|there||
||alone|
[]
exec.run: argument 3: env: invalid variable name "A=B"
exec.run: argument 3: env: A: string expected, got table
exec.run: argument 3: env: table expected, got string`
	assert.Equal(t, payload.Payloads{want}, res)
}
