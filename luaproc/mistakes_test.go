package luaproc

// Mistakes are loud (issue 31): a misspelt option key raises naming it,
// a misspelt main is an error with the hint, and supervisor.start from a
// script's top level says what to do instead of failing inside
// supervisor.lua.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnknownOptionsRaise: every options table a script passes is
// checked against the keys the function takes.
func TestUnknownOptionsRaise(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, Allow: []string{"exec", "http", "listen"}})
	const src = `
function w() process.receive() end
local function msg(f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "no error")
  return err
end
function main()
  return {
    msg(exec.run, "true", {}, {timout = 1}),
    msg(exec.run, "true", {}, {foo = 1}),
    msg(http.get, "http://127.0.0.1:1/", {timout = 1}),
    msg(http.request, {url = "http://127.0.0.1:1/", bdy = "x"}),
    msg(process.receive, {match = function() return true end, timout = 0}),
    msg(process.receive, {function() end}),
    msg(http.serve, "127.0.0.1:0", "w", {max_bdy = 1}),
    msg(http.serve, "127.0.0.1:0", "w", {tls = {cert = "c", ky = "k"}}),
    msg(supervisor.start, {stratgy = "one_for_one", children = {}}),
    msg(supervisor.start, {children = {{entry = "w", restrat = "permanent"}}}),
    msg(pool.map, "w", {}, {concurency = 2}),
    msg(inspect, {}, {dept = 1}),
    msg(exec.start, "true", {}, {evn = {}}),
  }
end`
	res, err := runLua(t, rt, "opts.lua", src, "main")
	require.NoError(t, err)
	require.Equal(t, []any{
		"exec.run: unknown option 'timout' (did you mean 'timeout'?)",
		"exec.run: unknown option 'foo' (the options are clear_env, dir, env, stdin and timeout)",
		"http.get: unknown option 'timout' (did you mean 'timeout'?)",
		"http.request: unknown option 'bdy' (did you mean 'body'?)",
		"process.receive: unknown option 'timout' (did you mean 'timeout'?)",
		"process.receive: unknown option '[1]' (the options are match and timeout)",
		"http.serve: unknown option 'max_bdy' (did you mean 'max_body'?)",
		"http.serve: tls: unknown option 'ky' (did you mean 'key'?)",
		"opts.lua:18: supervisor.start: unknown option 'stratgy' (did you mean 'strategy'?)",
		"opts.lua:19: supervisor.start: child 1: unknown option 'restrat' (did you mean 'restart'?)",
		"opts.lua:20: pool.map: unknown option 'concurency' (did you mean 'concurrency'?)",
		"inspect: unknown option 'dept' (did you mean 'depth'?)",
		"exec.start: unknown option 'evn' (did you mean 'env'?)",
	}, res[0])
}

// TestMisspeltMain: a script without main whose function one edit away
// is never called fails with the hint; one that calls it, or whose
// neighbour is a short word, is a chunk program as in Lua.
func TestMisspeltMain(t *testing.T) {
	rt, stdout, _ := newTestRuntime(t, Options{Workers: 2})
	_, err := runLua(t, rt, "typo.lua", `function mian() print("never") end`, "")
	require.EqualError(t, err, `typo.lua: no function "main", the entry point (did you mean 'mian'? the script defines it and never calls it)`)
	_, err = runLua(t, rt, "called.lua", "function Main() print('called') end\nMain()", "")
	require.NoError(t, err)
	_, err = runLua(t, rt, "word.lua", "function min(a, b) return a end\nprint('chunk')", "")
	require.NoError(t, err)
	require.Equal(t, "called\nchunk\n", stdout.String())
	_, err = runLua(t, rt, "entry.lua", "function main() end", "mian")
	require.EqualError(t, err, `entry.lua: unknown entry "mian" (did you mean 'main'? entries: main)`)
}

// TestSupervisorAtTopLevel: supervisor.start in the chunk of a script
// without main names the missing main, at the script's line.
func TestSupervisorAtTopLevel(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	_, err := runLua(t, rt, "sup.lua", "function child() end\nlocal sup = supervisor.start{children = {{entry = 'child'}}}", "")
	require.EqualError(t, err, "sup.lua:2: supervisor.start: called from the top level of sup.lua, which the supervisor's process runs again; "+
		"call it from main (the script defines no function main: define function main() and start the supervisor there)")
}
