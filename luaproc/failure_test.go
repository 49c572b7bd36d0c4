package luaproc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestCrashReports: a process that fails while nothing links, monitors or
// waits on it is logged once, with its entry and where; a watched one, a
// killed one and one a linked failure ended are not.
func TestCrashReports(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "crash.lua", `
function broken() error("unwatched failure") end
function watched() error("watched failure") end
function idle() process.receive() end
function linked(boss)
  process.spawn_link("broken")
  process.receive()
end
function main()
  process.spawn("broken")                      -- reported
  local _, ref = process.spawn_monitor("watched")
  process.receive()                            -- its down
  local w = process.spawn("watched")
  local ok = process.wait(w)                   -- waited on: not reported
  local i = process.spawn("idle")
  process.kill(i, "on purpose")                -- killed: not reported
  local l, lref = process.spawn_monitor("linked", process.self())
  process.receive()                            -- linked's down
  return ok
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false}, res)
	out := logs.String()
	// once: the "broken" under "linked" is linked, so it is watched
	assert.Equal(t, 1, strings.Count(out, "process crashed: crash.lua:2: unwatched failure"), out)
	assert.Contains(t, out, "entry=broken")
	assert.Contains(t, out, `at="crash.lua:2: in function 'broken'"`)
	assert.NotContains(t, out, "watched failure\"")
	assert.NotContains(t, out, "on purpose")
	assert.NotContains(t, out, "linked process")

	quiet, _, qlogs := newTestRuntime(t, Options{QuietCrashes: true})
	_, err = runLua(t, quiet, "crash.lua", `function b() error("x") end function main() process.spawn("b") time.sleep(0.05) end`, "main")
	require.NoError(t, err)
	assert.NotContains(t, qlogs.String(), "crashed")
}
