-- Lua 5.1 levels of calls lost to tail calls (luaproc/lua51_test.go,
-- TestTailCallLevelsAs51): tail51.want.txt is what `lua5.1 tail51.lua` prints.
local out = {}
local function put(...) local t = {} for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end out[#out + 1] = table.concat(t, " ") end
local function info(t) local ks = {} for k, v in pairs(t) do ks[#ks + 1] = k .. "=" .. (type(v) == "string" and v or type(v) == "number" and v or type(v)) end table.sort(ks) return table.concat(ks, ",") end
local function f()
  put(info(debug.getinfo(2)))
  put(info(debug.getinfo(2, "fL")), info(debug.getinfo(2, "n")))
  put(debug.getinfo(3, "S").what, debug.getinfo(4, "S").what, debug.getinfo(5, "S").what)
  put(select("#", debug.getlocal(2, 1)), debug.getlocal(2, 1))
  put(pcall(getfenv, 3))
  put(pcall(setfenv, 4, {}))
  put(getfenv(4) == _G, pcall(error, "e", 3))
  put(pcall(error, "e", 5))
  put(debug.traceback("m", 2))
  put(debug.traceback("m", 3))
  put(debug.traceback())
end
local function g() return f() end
local function h() return g() end
local function k() h() end
k()
local function deep(n) if n == 0 then return debug.traceback("deep") end return deep(n - 1) end
put(deep(100000))
local function p() return pcall(error, "x") end
local function q() return pcall(function() return debug.traceback("in pcall") end) end
put(p())
put(q())
local ev = {}
local function t2() local i = debug.getinfo(3, "S") return i and i.what end
local function t1() return t2() end
debug.sethook(function(e)
  local i = e ~= "call" and debug.getinfo(3, "S") -- (5.1 calls the hook of a tail call before its caller's level is lost)
  ev[#ev + 1] = e .. (i and ":" .. i.what or "")
end, "cr")
local function t0() t1() end
t0()
debug.sethook()
put(table.concat(ev, " "))
print(table.concat(out, "\n"))
