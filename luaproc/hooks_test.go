package luaproc

// debug.sethook's hooks, called as Lua 5.1 calls them (lua/hook.go,
// debuglib.go): the events and their order are compared with lua5.1's
// for the same script when lua5.1 is installed.

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// hookTraceScript records the events of a "crl" hook as
// event@line (line events) or event@linedefined (call and return, -1
// for a Go function), with the currentline getinfo(2) answers for a line
// event, and a local the hook reads at level 2.
const hookTraceScript = `
local ev = {}
local function hook(e, l)
  local info = debug.getinfo(2, "Sl")
  local s = e .. "@" .. (l or e == "tail return" and "" or info.linedefined)
  if e == "line" then
    s = s .. "/" .. info.currentline
    local name, v = debug.getlocal(2, 1)
    if name == "a" and l == 15 then s = s .. "/a=" .. tostring(v) end
  end
  ev[#ev + 1] = s
end
local function add(a, b)
  local c = a + b
  return c
end
local function tail(n) return add(n, 1) end
local function loop(n)
  local s = 0
  for i = 1, n do
    s = s + i
  end
  return s
end
function main()
  debug.sethook(hook, "crl")
  local x = add(1, 2)
  x = tail(x)
  x = x + loop(2)
  local m = math.max(x, 1)
  debug.sethook()
  return table.concat(ev, " ")
end
`

// hookTraceWant is lua5.1's answer to hookTraceScript.
const hookTraceWant = "return@-1 line@27/27 call@13 line@14/14 line@15/15/a=1 return@13 line@28/28 " +
	"call@17 line@17/17 call@13 line@14/14 line@15/15/a=3 return@13 tail return@ " +
	"line@29/29 call@18 line@19/19 line@20/20 line@21/21 line@20/20 line@21/21 line@20/20 line@23/23 return@18 " +
	"line@30/30 call@-1 return@-1 line@31/31 call@-1"

func TestHookEventsAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "hooks.lua", hookTraceScript, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{hookTraceWant}, res)

	lua51, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("lua5.1 is not installed: no comparison")
	}
	out, err := exec.Command(lua51, "-e", hookTraceScript+"\nio.write(main())").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, hookTraceWant, string(out), "lua5.1's events")
}

// TestHookCount: count events every count instructions (db.lua's
// bounds), before the line event of the same instruction.
func TestHookCount(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "count.lua", `
function main()
  local a = 0
  debug.sethook(function (e) a = a + 1 end, "", 1)
  a = 0; for i = 1, 1000 do end; local n1 = a
  debug.sethook(function (e) a = a + 1 end, "", 4)
  a = 0; for i = 1, 1000 do end; local n4 = a
  local f, m, c = debug.gethook()
  debug.sethook(function (e) a = a + 1 end, "", 4000)
  a = 0; for i = 1, 1000 do end; local n4000 = a
  local order = {}
  debug.sethook(function (e) order[#order + 1] = e end, "l", 1)
  local y = 1
  debug.sethook()
  return n1 > 1000 and n1 < 1012, n4 > 250 and n4 < 255, n4000, m, c, table.concat(order, " ")
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, true, int64(0), "", int64(4), "count line count line count count"}, res)
}

// TestHookPerCoroutine: a hook is its coroutine's (sethook's thread
// argument, or the running coroutine); pcall's function runs under its
// caller's hook, and a hook set inside pcall stays; the hook is not
// called while it runs. (The answer is lua5.1's for the same script.)
func TestHookPerCoroutine(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "co.lua", `
function main()
  local lines, colines = {}, {}
  local function body() local z = 1 end
  local function coh(e, l) colines[#colines + 1] = l end
  local co = coroutine.create(function (x)
    local a = x
    coroutine.yield(a)
    return a
  end)
  debug.sethook(co, coh, "l")
  local same = debug.gethook(co) == coh and debug.gethook() == nil
  coroutine.resume(co, 1)
  coroutine.resume(co)
  pcall(debug.sethook, function (e, l)
    lines[#lines + 1] = l
    local x = 1 -- no line events of the hook's own
  end, "l")
  local set = debug.gethook() ~= nil
  pcall(body)
  debug.sethook()
  return same, table.concat(colines, ","), set, table.concat(lines, ",")
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, "7,8,9", true, "19,20,4,21"}, res)
}

// TestHookCannotYield: a blocking call or a yield inside a hook raises
// an error instead of suspending the nested VM loop the hook runs in.
func TestHookCannotYield(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "yield.lua", `
function main()
  local errs = {}
  debug.sethook(function ()
    debug.sethook()
    errs[1] = select(2, pcall(time.sleep, 0))
  end, "l")
  local x = 1
  local co = coroutine.create(function ()
    debug.sethook(function ()
      debug.sethook()
      errs[2] = select(2, pcall(coroutine.yield, 1))
    end, "l")
    local y = 2
    return "done"
  end)
  local ok, v = coroutine.resume(co)
  return errs[1], errs[2], ok, v
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 4)
	assert.Contains(t, res[0], "time.sleep: cannot block inside a debug hook")
	assert.Contains(t, res[1], "attempt to yield across metamethod/C-call boundary")
	assert.Equal(t, payload.Payloads{true, "done"}, res[2:])
}
