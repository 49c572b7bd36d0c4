package luaproc

// Script names live as long as their scripts: nothing global keeps the
// name of every script ever compiled (lua.FunctionProto.FileChunk).

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestScriptNamesFreedWithScripts: 50,000 scripts with unique 200-byte
// names, loaded and dropped, leave nothing behind once the runtime is
// shut down. A set of every name compiled held at least 10 MB (the names
// alone) after it; the bound allows 4 MB for what the rest of the
// process's heap does meanwhile.
func TestScriptNamesFreedWithScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles 50,000 scripts")
	}
	const n, nameLen = 50_000, 200
	before := heapAfterGC()
	rt, err := New(Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	pad := strings.Repeat("x", nameLen-10)
	for i := range n {
		_, err := rt.LoadString(fmt.Sprintf("%s%06d.lua", pad, i), "return 1")
		require.NoError(t, err)
	}
	require.NoError(t, rt.Shutdown(context.Background()))
	rt = nil
	grown := heapAfterGC() - before
	t.Logf("heap grew %.1f MB over %d scripts of %d-byte names", float64(grown)/(1<<20), n, nameLen)
	assert.Less(t, grown, int64(4<<20), "the scripts' names outlived them")
}

// TestDumpedScriptFunctionKeepsItsSource: a function of a script, dumped
// and loaded again, still has the script's "@name" as its source and
// its positions (as Lua 5.1's string.dump keeps them); a chunk of
// loadstring keeps its chunk name.
func TestDumpedScriptFunctionKeepsItsSource(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "dumped.lua", `
local function f() return debug.getinfo(1, "S").source end
local g = loadstring(string.dump(f))
local _, e = pcall(loadstring(string.dump(function() error("boom") end)))
return f(), g(), e, debug.getinfo(loadstring("return 1", "chunky"), "S").source`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"@dumped.lua", "@dumped.lua", "dumped.lua:4: boom", "chunky"}, res)
}
