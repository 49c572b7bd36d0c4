-- require, as Lua 5.1 has it, for a luarun process.
--
-- It is Lua, not Go, so that a module may block (yield) while it loads:
-- the module's chunk is called from here by an ordinary CALL, which a
-- yield can cross (a Go function calling Lua could not).
--
-- package.loaded[name] holds LOADING while name loads. A module whose
-- loading failed keeps it, as in Lua 5.1: requiring it again is an error
-- until the script clears package.loaded[name]. The Go side (require.go)
-- knows which coroutine loads what, so that it can tell a cycle (named
-- with its chain) from a failed load, and make a task of process.all
-- that needs a module another task is loading wait for it.
--
-- It runs once per Runtime in the template state; like prelude.lua it
-- must only read its upvalues and must not use globals.
--
-- Arguments: the LOADING marker and the Go helpers:
--   raise(msg)    raises msg at the position of the script's code that
--                 called require (gopher-lua's error(msg, 2) names the
--                 function that calls error, not its caller)
--   tables()      this process's package.loaded (the original table) and
--                 the current package.loaders
--   begin(name)   name starts loading in the calling coroutine
--   finish(name)  name has loaded: wake the tasks waiting for it
--   check(name)   name is LOADING: returns an error message (a cycle, or
--                 a failed load), or waits until it has loaded elsewhere
local LOADING, raise, tables, begin, finish, check = ...
local type, tostring, rawget = type, tostring, rawget

local function require(name)
  local t = type(name)
  if t == "number" then
    name = tostring(name)
  elseif t ~= "string" then
    raise("bad argument #1 to 'require' (string expected, got " .. (t == "nil" and "no value" or t) .. ")")
  end
  local loaded, loaders = tables()
  local value = loaded[name]
  if value then
    if value ~= LOADING then return value end
    local msg = check(name)
    if msg then raise(msg) end
    return require(name) -- it has loaded, or failed, in another task
  end
  if type(loaders) ~= "table" then raise("'package.loaders' must be a table") end
  local loader
  local tried = ""
  local i = 1
  while true do -- as 5.1's ll_require: up to the first nil, read raw (#loaders would copy the view)
    local searcher = rawget(loaders, i)
    if searcher == nil then break end
    loader = searcher(name)
    if type(loader) == "function" then break end
    if type(loader) == "string" then
      tried = tried == "" and loader or tried .. loader
    end
    loader = nil
    i = i + 1
  end
  if loader == nil then raise("module '" .. name .. "' not found:" .. tried) end
  begin(name)
  loaded[name] = LOADING
  local result = loader(name) -- as in Lua 5.1 (5.2 passes extra too): module(...) takes it all
  if result ~= nil then loaded[name] = result end
  if loaded[name] == LOADING then loaded[name] = true end
  finish(name)
  return loaded[name]
end

return require
