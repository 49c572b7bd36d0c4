-- Levels of a coroutine that is not running, as Lua 5.1 counts them
-- (luaproc/lua51_test.go, TestCoroutineLevelsAs51): level 0 of one
-- suspended in yield is that C function; one an error ended keeps the
-- frames it failed in, with their locals; a coroutine's base has nothing
-- below it. coro51.want.txt is what `lua5.1 coro51.lua` prints.
local co = coroutine.create(function (x)
  local a = 1
  coroutine.yield(debug.getinfo(1, "l"))
end)
print(debug.traceback(co))
print(debug.getinfo(co, 0))
local _, l = coroutine.resume(co, 10)
print(debug.traceback(co))
print(debug.traceback(co, "msg", 1))
local x = debug.getinfo(co, 0, "nSl")
print(x.what, x.name, x.currentline, x.short_src, x.source, x.namewhat)
x = debug.getinfo(co, 1, "nSlf")
print(x.what, x.name, x.currentline == l.currentline, type(x.func))
print(debug.getinfo(co, 2))
print(debug.getlocal(co, 1, 1))
print(debug.getlocal(co, 1, 2))
print(debug.setlocal(co, 1, 2, "hi"), debug.getlocal(co, 1, 2))
print(debug.getlocal(co, 0, 1))
coroutine.resume(co)
print(coroutine.status(co), debug.traceback(co))

local function f(n)
  if n > 0 then return f(n - 1) else coroutine.yield() end
end
co = coroutine.create(f)
coroutine.resume(co, 3)
print(debug.traceback(co))
print(debug.getinfo(co, 2, "S").what, debug.getinfo(co, 4, "S").what, debug.getinfo(co, 5))

function g(i) if i == 0 then error(i) else coroutine.yield(); g(i - 1) end end
co = coroutine.create(function (x) g(x) end)
coroutine.resume(co, 1)
print(debug.traceback(co))
print(coroutine.resume(co))
print(debug.traceback(co))
print(debug.getinfo(co, 0, "n").name, debug.getinfo(co, 1, "l").currentline)
co = coroutine.create(function () local t = nil; return t.x end)
print(coroutine.resume(co))
print(debug.traceback(co))
local function z() local t = nil; return t.x end
local function w() z() end
co = coroutine.create(w)
print(coroutine.resume(co))
print(debug.traceback(co))
co = coroutine.create(function() local u; u() end)
print(coroutine.resume(co))
print(debug.traceback(co))
print(debug.getinfo(co, 0, "l").currentline, debug.getlocal(co, 0, 1))
co = coroutine.create(function() local a = {5}; error("x") end)
print(coroutine.resume(co))
print(debug.getinfo(co, 0, "n").name, debug.getlocal(co, 1, 1), select(2, debug.getlocal(co, 1, 1))[1])
