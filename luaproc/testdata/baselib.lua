-- The base library where luarun replaces gopher-lua's function to keep
-- Lua 5.1's behaviour. Expected values are what lua5.1 prints for the
-- same code.
local T = {}
local check = require("lib.check")
local eq = check.eq
local me = "testdata/baselib.lua" -- the chunk's name: run from luaproc/

local function f(level) error("boom", level) end
local function g(level) f(level) end
local function h(level) g(level) end

function T.test_error_levels()
  local want = {[0] = "boom", me .. ":9: boom", me .. ":10: boom", me .. ":11: boom",
    "boom", -- level 4 is pcall: a C function in Lua 5.1, no position
    me .. ":18: boom"}
  for level = 0, 5 do
    local ok, err = pcall(h, level)
    eq(ok, false); eq(err, want[level], "level " .. level)
  end
  eq(select(2, pcall(error, "direct")), "direct") -- level 1 is pcall
  eq(select(2, pcall(error, "up", 2)), me .. ":22: up")
  eq(select(2, pcall(error, 42)), "42")
  eq(select(2, pcall(error)), nil)
  local t = {}
  eq(select(2, pcall(error, t)), t)
  eq(select(2, pcall(error, "level 0", 0)), "level 0")
end

function T.test_error_levels_in_coroutines()
  -- a coroutine's base ends the walk
  eq(select(2, pcall(coroutine.wrap(function() error("x", 2) end))), "x")
  eq(select(2, pcall(coroutine.wrap(function() f(2) end))), me .. ":33: boom")
  eq(select(2, xpcall(function() f(2) end, function(e) return "h: " .. e end)), "h: " .. me .. ":34: boom")
end

return T
