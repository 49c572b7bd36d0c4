package luaproc

// Crash reports with the chain (issue 31): the failure of any process
// carries its whole Lua traceback — in the crash report logged for it,
// as process.wait's third value, and as the traceback field of a down
// or exit event.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainSrc fails in f, which g tail-calls from the entry h.
const chainSrc = `
local function f() error("boom") end
local function g() return f() end
function h() local x = g(); return x end
`

const chainTrace = "stack traceback:\n\t[C]: in function 'error'\n\tc.lua:2: in function <c.lua:2>\n\t(tail call): ?\n\tc.lua:4: in function 'h'"

func TestCrashReportCarriesTraceback(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{Workers: 2})
	_, err := runLua(t, rt, "c.lua", chainSrc+"function main() process.spawn('h') end", "main")
	require.NoError(t, err)
	logs.waitFor(t, "process crashed")
	assert.Contains(t, logs.String(), `traceback="[C]: in function 'error'\nc.lua:2: in function <c.lua:2>\n(tail call): ?\nc.lua:4: in function 'h'"`)
}

func TestWaitAndDownCarryTraceback(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	res, err := runLua(t, rt, "c.lua", chainSrc+`
function main()
  local ok, reason, tb = process.wait(process.spawn("h"))
  local _, ref = process.spawn_monitor("h")
  local down = process.receive()
  process.trap_exits(true)
  process.spawn_link("h")
  local exit = process.receive()
  return ok, reason, tb, down.reason, down.traceback, exit.traceback
end`, "main")
	require.NoError(t, err)
	require.Equal(t, []any{false, "c.lua:2: boom", chainTrace, "c.lua:2: boom", chainTrace, chainTrace}, []any(res))
}
