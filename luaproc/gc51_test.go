package luaproc

// __gc finalizers (lua/gc.go) at a process's end: as 5.1's lua_close, and
// before the state is reused by the next process.

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFinalizersRunAtProcessEnd(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rt, stdout, _ := newTestRuntime(t, Options{Workers: 1}) // one worker: the states are recycled
	for i := range 3 {
		_, err := runLua(t, rt, "a.lua", `
local keep = {}
for i = 1, 2 do
  local u = newproxy(true)
  getmetatable(u).__gc = function(o) print("closing " .. i); newproxy(o) end
  keep[i] = u
end
print("end")`, "")
		require.NoError(t, err, "run %d", i)
	}
	want := "end\nclosing 2\nclosing 1\n"
	require.Equal(t, want+want+want, stdout.String())
}

func TestFinalizersRunAfterAnError(t *testing.T) {
	rt, stdout, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "a.lua", `
_G.keep = newproxy(true)
getmetatable(keep).__gc = function() print("closed") end
error("failed")`, "")
	require.Error(t, err)
	require.Equal(t, "closed\n", stdout.String())
}

// A killed process runs no more Lua code: no finalizers.
func TestFinalizersNotRunWhenKilled(t *testing.T) {
	rt, stdout, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("idle.lua", `
function main()
  _G.keep = newproxy(true)
  getmetatable(keep).__gc = function() print("finalized") end
  print("ready")
  process.receive()
end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main")
	require.NoError(t, err)
	stdout.waitFor(t, "ready")
	require.NoError(t, rt.Kill(h.PID(), "enough"))
	_, err = h.Wait(context.Background())
	require.Error(t, err)
	require.Equal(t, "ready\n", stdout.String())
}

// A task suspended in process.all holds its userdata: another task's
// collection does not finalize it (the tasks are roots, Global.GCRoots).
func TestFinalizersSeeSuspendedTasks(t *testing.T) {
	rt, stdout, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "a.lua", `
process.all(function()
  local u = newproxy(true)
  getmetatable(u).__gc = function() print("finalized") end
  process.sleep(0.01)
  print("holder", type(u))
end, function()
  collectgarbage()
  print("collected")
end)
collectgarbage()
print("end")`, "")
	require.NoError(t, err)
	require.Equal(t, "collected\nholder\tuserdata\nfinalized\nend\n", stdout.String())
}

// The Lua 5.1 suite's gc.lua, its closing-state finalizer included (its
// output is lua5.1's: the compat harness's suite_gc row compares them).
func TestSuiteGCLua(t *testing.T) {
	src, err := os.ReadFile("../lua/_lua5.1-tests/gc.lua")
	require.NoError(t, err)
	rt, stdout, _ := newTestRuntime(t, Options{})
	_, err = runLua(t, rt, "gc.lua", string(src), "")
	require.NoError(t, err)
	require.Equal(t, "testing garbage collection\ntables\nstrings\nfunctions\nfunctions with errors\n"+
		"long strings\nweak tables\ndeep structures\nOK\n>>> closing state <<<\n\n", stdout.String())
}
