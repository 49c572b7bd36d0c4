package luaproc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestInspect: inspect writes values as a user would write them in Lua,
// keys sorted, cycles marked, strings escaped to one line that Lua reads
// back to the same string.
func TestInspect(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	src := `
function main()
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(inspect({a = {b = 1}, 2, "x"}))
  add(inspect({[10] = "ten", [1.5] = 0, z = 1, ["not a name"] = true, ["end"] = 1, [true] = 0, [3] = 3}))
  local t = {name = "t"}; t.self = t; t.list = {t}
  add(inspect(t))
  local shared = {1}
  add(inspect({shared, shared}))
  add(inspect("a\nb\t\"q\"\\\0" .. "1\255é"))
  add(inspect(nil) .. " " .. inspect(1/0) .. " " .. inspect(0.1) .. " " .. inspect(-3) .. " " .. inspect(false))
  add(inspect({}))
  add(inspect({a = {b = {c = {}}}}, {depth = 2}))
  add(inspect({1, nil, 3}))
  add(tostring(inspect(print):match("^<function: 0x%x+>$") ~= nil))
  add(tostring(loadstring("return " .. inspect("a\nb\0" .. "1\255é"))() == "a\nb\0" .. "1\255é"))
  return table.concat(out, "\n")
end`
	res, err := runLua(t, rt, "inspect.lua", src, "main")
	require.NoError(t, err)
	want := `{2, "x", a = {b = 1}}
{[1.5] = 0, [3] = 3, [10] = "ten", ["end"] = 1, ["not a name"] = true, z = 1, [true] = 0}
{list = {<cycle>}, name = "t", self = <cycle>}
{{1}, {1}}
"a\nb\t\"q\"\\\0001\255é"
nil inf 0.1 -3 false
{}
{a = {b = {...}}}
{1, [3] = 3}
true
true`
	assert.Equal(t, payload.Payloads{want}, res)
}

// TestRenderingDeepNesting: a table nested far deeper than any rendering
// follows is written to maxRenderDepth levels and then {...}, by inspect
// and by log.* alike — the renderer recurses on the Go stack, and a
// million levels used to be a Go stack overflow, which ends the program.
func TestRenderingDeepNesting(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "deep.lua", `
function main()
  local t = {}
  for i = 1, 1000000 do t = {t} end
  log.info("deep", "t", t)
  local s = inspect(t)
  local _, opened = s:gsub("{", "")
  return opened, s:find("{...}", 1, true) ~= nil, #s
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Equal(t, int64(maxRenderDepth+1), res[0], "levels written, then {...}")
	assert.Equal(t, true, res[1])
	logs.waitFor(t, "{...}")
}
