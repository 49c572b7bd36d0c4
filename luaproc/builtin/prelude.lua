-- luarun's Lua-side plumbing, run once in every process state.
--
-- Blocking calls (time.sleep, process.receive, db.query...) are Go
-- functions that yield the process's coroutine with the private marker
-- CMD; the Go side holds the request. gopher-lua's own pcall, xpcall and
-- coroutine.resume run their function in a nested VM loop that a yield
-- cannot cross, so they are replaced here by versions that run the
-- function in a coroutine of its own and pass every CMD yield outward,
-- resuming the function with the results when they come back in.
--
-- It runs once per Runtime, in the template state (see state.go): the
-- functions it makes are shared by every process state, so they must
-- only read their upvalues and must not use globals.
--
-- Arguments: the marker, then gopher-lua's raw coroutine functions, the
-- resume that fits the values to what the suspended call wants (Go),
-- process.all's Go half, the tables to fill, boot's Go helpers, and
-- pcall's (pstart, presume).
local CMD, raw_create, raw_yield, raw_status, resume, all_go, coroutine_t, process_t, arm, resolve, pstart, presume,
  arm_handler, take_handled = ...
local error, type, getmetatable = error, type, getmetatable

-- pass forwards the CMD yields of co to whoever resumed us, until co
-- returns, fails, or yields something of its own.
local function pass(co, ok, first, ...)
  if ok and first == CMD and raw_status(co) == "suspended" then
    return pass(co, resume(co, raw_yield(CMD)))
  end
  return ok, first, ...
end

-- A coroutine whose bottom frame is a blocking Go function cannot be
-- resumed into it: gopher-lua drops that frame when the function yields,
-- so the coroutine would end with the marker (or crash) instead of
-- returning the call's results. That happens when the body is a Go
-- function, or when a Lua body tail-calls one (return fs.read(p)). So
-- every coroutine body luarun starts calls its function from a frame of
-- its own, not in a tail call: trampoline for pcall and process.all (Go
-- side), body() for coroutine.create and coroutine.wrap.
local function same(...) return ... end
local function trampoline(f, ...)
  return same(f(...))
end
-- counted is pcall's and xpcall's trampoline: it returns the number of
-- results first, since gopher-lua reports one nil and no values alike
-- (select('#', pcall(function() return nil end)) must be 2).
local select = select
local function count(...) return select("#", ...), ... end
local function counted(f, ...)
  return count(f(...))
end
local function body(f)
  if type(f) ~= "function" then return f end -- raw_create names the bad argument
  return function(...) return same(f(...)) end
end

coroutine_t.create = function(f)
  return raw_create(body(f))
end

local function callable(f)
  if type(f) == "function" then return f end
  local mt = getmetatable(f)
  if type(mt) == "table" and mt.__call ~= nil then
    return function(...) return f(...) end
  end
  return nil
end

coroutine_t.resume = function(co, ...)
  return pass(co, resume(co, ...))
end

local function unwrap(ok, ...)
  if ok then return ... end
  error((...), 0)
end

coroutine_t.wrap = function(f)
  local co = raw_create(body(f))
  return function(...)
    return unwrap(pass(co, resume(co, ...)))
  end
end

-- pcall and xpcall forward every yield (a command, or a coroutine.yield
-- made inside the protected call on behalf of an enclosing coroutine).
-- Their coroutines come from pstart (Go): cheaper than coroutine.create,
-- which gives each coroutine a context of its own. pstart and presume
-- answer a status first: 0 failed, 1 returned, 2 yielded.
local function pcall_step(co, st, ...)
  if st == 0 then return false, ... end
  if st == 1 then return true, ... end
  return pcall_step(co, presume(co, raw_yield(...)))
end

local function pcall_start(co, ...)
  return pcall_step(co, ...)
end

pcall = function(f, ...)
  local fn = callable(f)
  if fn == nil then return false, "attempt to call a " .. type(f) .. " value" end
  return pcall_start(pstart(fn, ...))
end

local protected = pcall

-- xpcall's coroutine starts here: arm_handler makes an error raised in
-- it call the handler where it is raised, before the stack unwinds (as
-- Lua 5.1 does), so that xpcall(f, debug.traceback) shows the frames
-- that failed.
local function handled_trampoline(handler, f, ...)
  arm_handler(handler)
  return same(f(...)) -- not a tail call: f keeps a caller in tracebacks
end

-- handled is xpcall's failure: the handler's first result, or, if the
-- handler itself fails, "error in error handling" (as in Lua 5.1: xpcall
-- never raises).
local function handled(ok, ...)
  if ok then return false, (...) end
  return false, "error in error handling"
end

-- failed is xpcall's failure of co: what the handler made of the error
-- where it was raised, or (an error that was not raised in co's code: a
-- refused nesting, a Go call stack overflow) the handler called now.
local function failed(co, handler, ...)
  local ran, ok, v = take_handled(co)
  if ran then return handled(ok, v) end
  return handled(protected(handler, ...))
end

local function xpcall_step(co, handler, st, ...)
  if st == 0 then return failed(co, handler, ...) end
  if st == 1 then return true, ... end
  return xpcall_step(co, handler, presume(co, raw_yield(...)))
end

local function xpcall_start(handler, co, ...)
  return xpcall_step(co, handler, ...)
end

xpcall = function(f, handler, ...)
  if handler == nil then error("bad argument #2 to 'xpcall' (value expected)", 2) end
  local fn = callable(f)
  if fn == nil then return handled(protected(handler, "attempt to call a " .. type(f) .. " value")) end
  return xpcall_start(handler, pstart(handled_trampoline, handler, fn, ...))
end

local function all_check(ok, ...)
  if not ok then error((...), 0) end
  return ...
end

process_t.all = function(...)
  return all_check(all_go(...))
end

-- boot is every root task's function: it arms the traceback hook, runs the
-- chunk with the process's arguments, finds the entry point and runs it.
-- With no entry named and no main, the chunk alone was the program.
-- A named entry needs only the chunk's first result (a module table) and
-- resolve raises if it finds none: that path keeps no table of results
-- (a request process of http.serve runs it every time).
local unpack = unpack
local function pack(...) return {n = select("#", ...), ...} end

local function boot(chunk, entry, ...)
  arm()
  if entry ~= "" then
    local fn = resolve(entry, (chunk(...)))
    return same(fn(...)) -- fn is not tail-called: tracebacks then name the entry
  end
  local r = pack(chunk(...))
  local fn = resolve(entry, r[1])
  if fn == nil then return unpack(r, 1, r.n) end
  r = nil -- the chunk's results are garbage while the entry runs
  return same(fn(...))
end

return boot, trampoline, counted
