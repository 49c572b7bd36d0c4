package luaproc

import (
	"testing"

	lua "github.com/luarun/luarun/lua"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFrameLayout checks that the frames frames.go walks are those the
// interpreter's public API describes, at every level of a real call
// stack.
func TestFrameLayout(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	checked := 0
	L.SetGlobal("probe", L.NewFunction(func(L *lua.LState) int {
		dbg, ok := L.GetStack(0)
		require.True(t, ok)
		require.Same(t, dbg.Frame(), currentFrame(L), "LState.currentFrame")
		f := currentFrame(L)
		require.True(t, f.Fn.IsG)
		assert.Equal(t, 2, callerWants(f), "probe's caller wants 2 results")
		for level := 1; ; level++ {
			f = f.Parent
			dbg, ok := L.GetStack(level)
			if !ok {
				break
			}
			require.Same(t, dbg.Frame(), f, "level %d", level)
			_, err := L.GetInfo("l", dbg, lua.LNil)
			require.NoError(t, err)
			assert.Equal(t, dbg.CurrentLine, f.Fn.Proto.DbgSourcePositions[f.Pc-1], "level %d", level)
			checked++
		}
		return 0
	}))
	require.NoError(t, L.DoString(`
local function inner()
  local a, b = probe()
  return a
end
local function outer() return (inner()) end
outer()`))
	assert.Equal(t, 3, checked, "inner, outer and the chunk")
}
