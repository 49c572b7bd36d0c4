package luaproc

// Cases found running real pure-Lua libraries under lua5.1 and luarun;
// each expected string is what lua5.1 prints for the same script.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestLoadedChunkNamesInTracebacksAs51: a chunk loadstring or load named
// is [string "name"] in debug.getinfo's short_src, in positions and in
// tracebacks (it was "name"); load's default name is "=(load)" (it was
// "?"); a loaded main chunk that xpcall calls is followed by xpcall's
// level, not by the host's "[C]: ?" (which only follows the script's own
// main chunk).
func TestLoadedChunkNamesInTracebacksAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "ch.lua", `
local function rd(s) local done return function() if not done then done = true return s end end end
local i, j = loadstring("return debug.getinfo(1, 'S')", "nm")(), load(rd("return debug.getinfo(1, 'S')"))()
local _, tb = xpcall(loadstring("local function f() foo() end f()", "chunk"), debug.traceback)
local _, tb2 = xpcall(loadstring("foo()"), debug.traceback)
return i.source, i.short_src, j.source, j.short_src, tb, tb2`, "")
	require.NoError(t, err)
	msg := `[string "chunk"]:1: attempt to call global 'foo' (a nil value)` + "\n"
	msg2 := `[string "foo()"]:1: attempt to call global 'foo' (a nil value)` + "\n"
	assert.Equal(t, payload.Payloads{"nm", `[string "nm"]`, "=(load)", "(load)",
		msg + tb51(`[string "chunk"]:1: in function 'f'`, `[string "chunk"]:1: in main chunk`,
			"[C]: in function 'xpcall'", "ch.lua:4: in main chunk", "[C]: ?"),
		msg2 + tb51(`[string "foo()"]:1: in main chunk`, "[C]: in function 'xpcall'", "ch.lua:5: in main chunk", "[C]: ?"),
	}, res)
}
