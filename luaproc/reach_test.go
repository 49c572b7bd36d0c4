package luaproc

// TestNothingSharedIsReachable walks everything a process can reach and
// marks it; the next processes walk again and fail on any mark they
// find (shared/LUA_API.md, "Nothing shared is reachable").

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// reachWalker is the walk. It reaches: the globals and everything in
// them, the metatables of every value it meets and of every type (the
// string metatable too), the upvalues and environment of every function,
// the registry debug.getregistry gives, and, at every level of the
// stack, what debug.getinfo(level, "f"), debug.getlocal(level, n) for n
// from -3 to 60 and getfenv(level) answer — from the chunk, a preload
// function run by require, pcall, xpcall's handler, a coroutine, a sort
// comparator, a gsub callback, __index and __tostring metamethods, a
// pairs loop, a load reader, process.all and a receive{match=} function
// — and error values built-ins raise.
//
// Each thing found is checked for the mark (a key in a table, a
// table as an upvalue, environment or metatable), then marked: rawset of
// the key in a table, debug.setupvalue of every upvalue and setfenv of
// every function that is not the walk's own, debug.setmetatable of
// userdata and of the types. A mark another process finds is a shared,
// writable object (or one a recycled state kept). A shared table that is
// written raw ends the process with an internal error (lua/cow.go): the
// path printed last names it.
const reachWalker = `
local MARK = "luarun.reach-mark"
local token = {} -- this walk's mark: another's is another table
local marked = {[MARK] = token}
local found, seen, queue = {}, {}, {}
local print, type, pairs, next, pcall, rawget, rawset, tostring = print, type, pairs, next, pcall, rawget, rawset, tostring
local getupvalue, setupvalue, getlocal, getinfo, getmetatable, dsetmetatable =
  debug.getupvalue, debug.setupvalue, debug.getlocal, debug.getinfo, debug.getmetatable, debug.setmetatable
local getfenv, setfenv, registry = getfenv, setfenv, debug.getregistry
local concat = table.concat
local own = {}

local function visit(v, path)
  local tv = type(v)
  if tv == "table" or tv == "function" or tv == "userdata" or tv == "thread" then
    if not seen[v] and not own[v] then
      seen[v] = path
      queue[#queue + 1] = v
    end
  end
end

local function check(v, what)
  if type(v) == "table" and rawget(v, MARK) ~= nil and rawget(v, MARK) ~= token then
    found[#found + 1] = (seen[v] or "?") .. " " .. what
  end
end

local function expand(v)
  local path = seen[v]
  local tv = type(v)
  visit(getmetatable(v), path .. ".<mt>")
  check(getmetatable(v), "metatable of " .. path)
  if tv == "table" then
    check(v, "")
    local keys = {}
    for k, val in next, v do
      keys[#keys + 1] = k
      visit(k, path .. ".<key>")
      visit(val, path .. "." .. tostring(k))
    end
    print("mark " .. path)
    rawset(v, MARK, token)
  elseif tv == "function" then
    local env = getfenv(v)
    check(env, "env of " .. path)
    visit(env, path .. ".<env>")
    for i = 1, 255 do
      local name, uv = getupvalue(v, i)
      if name == nil then break end
      check(uv, "upvalue " .. name .. " of " .. path)
      visit(uv, path .. ".<upvalue " .. name .. ">")
      setupvalue(v, i, marked)
      setupvalue(v, i, uv)
    end
    pcall(setfenv, v, marked) -- refused for built-ins; the script's own functions get it back
    pcall(setfenv, v, env)
  elseif tv == "userdata" then
    if getmetatable(v) == nil then pcall(dsetmetatable, v, marked) end
  end
end

local function drain()
  local i = 1
  while queue[i] ~= nil do
    expand(queue[i])
    i = i + 1
  end
  for j = #queue, 1, -1 do queue[j] = nil end
end

local function probe(where)
  for level = 1, 60 do
    local info = getinfo(level, "f")
    if info == nil then break end
    visit(info.func, where .. ".<level " .. level .. ">")
    local ok, env = pcall(getfenv, level)
    if ok then visit(env, where .. ".<fenv " .. level .. ">") end
    for n = -3, 60 do
      local ok, name, v = pcall(getlocal, level, n)
      if ok and name then visit(v, where .. ".<local " .. level .. " " .. n .. " " .. name .. ">") end
    end
  end
end

for _, f in pairs({visit, check, expand, drain, probe}) do own[f] = true end
own[found], own[seen], own[queue], own[own], own[marked], own[token] = true, true, true, true, true, true

visit(_G, "_G")
visit(registry(), "registry")
for _, sample in pairs({0, true, "", print, coroutine.create(print), json.null}) do
  visit(getmetatable(sample), "<mt of " .. type(sample) .. ">")
end
probe("chunk")
package.preload["reach.x"] = function() probe("preload") return true end
require("reach.x")
pcall(function() probe("pcall") end)
xpcall(function() error("e") end, function(m) probe("xpcall handler") return m end)
coroutine.wrap(function() probe("coroutine") end)()
table.sort({2, 1}, function(a, b) probe("sort") return a < b end)
string.gsub("a", "a", function() probe("gsub") end)
local _ = setmetatable({}, {__index = function() probe("__index") end}).x
tostring(setmetatable({}, {__tostring = function() probe("__tostring") return "" end}))
for _ in pairs({1}) do probe("pairs loop") end
load(function() probe("load reader") return nil end)
process.all(function() probe("process.all") end)
process.send(process.self(), "m")
process.receive({match = function() probe("match") return true end})
for _, bad in pairs({
  function() error({}) end, function() require("reach.missing") end, function() string.rep() end,
  function() setmetatable(1, {}) end, function() process.send(nil) end, function() json.decode("{") end,
  function() return process.spawn("nope") end, function() return ("x"):bad() end,
}) do
  local ok, err = pcall(bad)
  visit(err, "<error>")
end
drain()
for _, sample in pairs({0, true, print, coroutine.create(print)}) do -- the types' metatables, last
  if getmetatable(sample) == nil then dsetmetatable(sample, marked) end
end
return concat(found, "\n")
`

func TestNothingSharedIsReachable(t *testing.T) {
	out := &syncBuffer{}
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, Stdout: out})
	walk := func() string {
		res, err := runLua(t, rt, "reach.lua", reachWalker, "")
		if err != nil {
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			return fmt.Sprintf("walk failed: %v (last: %s)", err, lines[len(lines)-1])
		}
		if len(res) != 1 || res[0] != "" {
			return fmt.Sprintf("marks another process left: %v", res)
		}
		return ""
	}
	for range 3 { // one after the other: recycled states too
		require.Empty(t, walk())
	}
	var wg sync.WaitGroup
	fails := make([]string, 4)
	for i := range fails { // at once: -race sees a write to anything shared
		wg.Add(1)
		go func() {
			defer wg.Done()
			fails[i] = walk()
		}()
	}
	wg.Wait()
	for _, f := range fails {
		require.Empty(t, f)
	}
}

// TestDebugIndexesOutOfRangeAs51: every debug function's index past
// what exists answers as lua5.1 does: getlocal and setlocal nil (also
// setlocal past the last slot, and at a level whose slots luarun hides),
// getupvalue and setupvalue nothing, getinfo nil, getfenv and setfenv of
// a level with no function 5.1's "invalid level" (luarun answered the
// globals, and setfenv "cannot change the environment"). The expected
// lines are lua5.1's, but for the function's name in the argument
// errors ('?' in 5.1, which has no name for a function pcall calls) and
// level 2 from the chunk, lua.c's C function, whose slots 5.1 shows.
func TestDebugIndexesOutOfRangeAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "d.lua", `
local out = {}
local function add(...)
  local t = {}
  for i = 1, select("#", ...) do t[i] = type((select(i, ...))) == "string" and (select(i, ...)) or type((select(i, ...))) end
  out[#out + 1] = select("#", ...) .. ":" .. table.concat(t, ",")
end
local function f(a, b) local c = 1
  for _, n in ipairs({-2, -1, 0, 1, 3, 4, 5, 50, 300}) do add(debug.getlocal(1, n)) end
  add(debug.setlocal(1, -1, 7)) add(debug.setlocal(1, 0, 7)) add(debug.setlocal(1, 300, 7))
  add(debug.setlocal(1, 3, 9), c)
end
f(1, 2)
local up = 1
local function g() return up end
for _, n in ipairs({-1, 0, 1, 2, 300}) do add(debug.getupvalue(g, n)) add(debug.setupvalue(g, n, 5)) end
add(debug.getinfo(100), debug.getinfo(-1))
add(select(2, pcall(getfenv, 100)))
add(select(2, pcall(getfenv, -1)))
add(select(2, pcall(setfenv, 100, {})))
add(select(2, pcall(debug.getlocal, 100, 1)))
add(select(2, pcall(debug.setlocal, 100, 1, 1)))
add((debug.getlocal(2, 1)))
add(debug.setlocal(2, 1, 1))
return table.concat(out, "\n")`, "")
	require.NoError(t, err)
	want := `1:nil
1:nil
1:nil
2:a,number
2:c,number
2:(for generator),function
2:(for state),table
1:nil
1:nil
1:nil
1:nil
1:nil
2:c,number
0:
0:
0:
0:
2:up,number
1:up
0:
0:
0:
0:
2:nil,table
1:bad argument #1 to 'f' (invalid level)
1:bad argument #1 to 'f' (level must be non-negative)
1:bad argument #1 to 'f' (invalid level)
1:bad argument #1 to 'f' (level out of range)
1:bad argument #1 to 'f' (level out of range)
1:nil
1:nil`
	require.Equal(t, payload.Payloads{want}, res)
}
