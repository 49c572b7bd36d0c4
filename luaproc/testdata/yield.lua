-- Blocking calls inside pcall, xpcall, process.all and user coroutines,
-- and the clear errors where gopher-lua cannot yield.
local T = {}

local eq = require("lib.check").eq

function T.test_sleep_in_pcall()
  local ok, a, b = pcall(function(x)
    time.sleep(0.01)
    return x, "after"
  end, "arg")
  eq(ok, true); eq(a, "arg"); eq(b, "after")
end

function T.test_error_after_sleep_in_pcall()
  local ok, err = pcall(function()
    time.sleep(0.01)
    error("late failure")
  end)
  eq(ok, false)
  assert(err:find("yield.lua:%d+: late failure"), err)
  -- error values that are not strings come back as they were
  local ok2, e2 = pcall(function() time.sleep(0); error({code = 3}) end)
  eq(ok2, false); eq(e2.code, 3)
end

function T.test_nested_pcall()
  local ok, inner_ok, v = pcall(function()
    return pcall(function()
      time.sleep(0.01)
      return "deep"
    end)
  end)
  eq(ok, true); eq(inner_ok, true); eq(v, "deep")
end

function T.test_xpcall_handler()
  local ok, msg = xpcall(function()
    time.sleep(0.01)
    error("bad")
  end, function(e) return "handled: " .. e end)
  eq(ok, false)
  assert(msg:find("^handled: .*bad"), msg)
  local ok2, v = xpcall(function() time.sleep(0); return 5 end, print)
  eq(ok2, true); eq(v, 5)
end

function T.test_pcall_reuses_coroutines_safely()
  -- many protected calls, failing and not, blocking and not
  for i = 1, 200 do
    local ok, v = pcall(function()
      if i % 3 == 0 then error("e" .. i, 0) end
      if i % 5 == 0 then time.sleep(0) end
      return i
    end)
    if i % 3 == 0 then eq(ok, false); eq(v, "e" .. i) else eq(ok, true); eq(v, i) end
  end
  -- Go functions keep their results
  local ok, a, b = pcall(tostring, 5)
  eq(ok, true); eq(a, "5"); eq(b, nil)
  eq(select("#", pcall(select, "#", 1, 2)), 2)
  eq(select(2, xpcall(math.max, print, 3, 9)), 9)
  -- coroutine.running inside pcall is the enclosing coroutine, as in Lua
  local outer = coroutine.running()
  local _, inner = pcall(coroutine.running)
  eq(inner, outer)
  local co = coroutine.create(function()
    local _, r = pcall(function() return coroutine.running() end)
    return r
  end)
  local _, r = coroutine.resume(co)
  eq(r, co)
end

function T.test_pcall_non_function()
  local ok, err = pcall(nil)
  eq(ok, false); eq(err, "attempt to call a nil value")
  local callable = setmetatable({}, {__call = function(_, x) time.sleep(0); return x * 2 end})
  local ok2, v = pcall(callable, 21)
  eq(ok2, true); eq(v, 42)
end

function T.test_sleep_in_user_coroutine()
  local co = coroutine.create(function(a)
    time.sleep(0.01)
    local b = coroutine.yield(a + 1)
    time.sleep(0.01)
    return b * 2
  end)
  local ok, v = coroutine.resume(co, 1)
  eq(ok, true); eq(v, 2)
  eq(coroutine.status(co), "suspended")
  ok, v = coroutine.resume(co, 10)
  eq(ok, true); eq(v, 20)
  eq(coroutine.status(co), "dead")
end

function T.test_wrap_generator_with_sleep()
  local gen = coroutine.wrap(function()
    for i = 1, 3 do
      time.sleep(0)
      coroutine.yield(i)
    end
  end)
  eq(gen(), 1); eq(gen(), 2); eq(gen(), 3)
end

function T.test_user_yield_inside_pcall_inside_coroutine()
  local co = coroutine.wrap(function()
    local ok, v = pcall(function()
      local got = coroutine.yield("from inside pcall")
      time.sleep(0)
      return got
    end)
    return ok, v
  end)
  eq(co(), "from inside pcall")
  local ok, v = co("resumed")
  eq(ok, true); eq(v, "resumed")
end

function T.test_fewer_results_than_wanted()
  -- a call that wants more values than the resume brings gets nils
  local a, b, c = time.sleep(0)
  eq(a, nil); eq(b, nil); eq(c, nil)
  local co = coroutine.create(function()
    local x, y, z = coroutine.yield()
    return x, y, z
  end)
  coroutine.resume(co)
  local ok, x, y, z = coroutine.resume(co, 1)
  eq(ok, true); eq(x, 1); eq(y, nil); eq(z, nil)
end

function T.test_more_results_than_wanted()
  -- extra values of a resumed call are dropped, as for any call
  local me = process.self()
  local function one() return (process.receive(5)) end -- blocks, resumed with msg, from
  local n = process.all(
    function() return select("#", one()) end,
    function() time.sleep(0.01); process.send(me, "late") end)
  eq(n, 1)
  local co = coroutine.create(function()
    local function first() return (coroutine.yield()) end
    return first()
  end)
  coroutine.resume(co)
  eq(select("#", coroutine.resume(co, 1, 2, 3)), 2, "true and one value")
end

function T.test_all_concurrent()
  local me = process.self()
  local function wait_for(word)
    return (process.receive{match = function(m) return m == word end, timeout = 10})
  end
  local t0 = time.monotonic()
  -- the second and third each wait for the other's message while the
  -- first sleeps: run one after the other, in any order, they would time
  -- out (no upper bound on the time: a loaded machine may be slow)
  local a, b, c = process.all(
    function() time.sleep(0.2); return "a" end,
    function() process.send(me, "to c"); return wait_for("to b") and "b", "ignored" end,
    function() local got = wait_for("to c"); process.send(me, "to b"); return got and "c" end)
  local dt = time.monotonic() - t0
  eq(a, "a"); eq(b, "b"); eq(c, "c")
  assert(dt >= 0.19, "took " .. dt .. " s: returned before the longest sleep (0.2 s)")
end

function T.test_all_raises_after_all_finished()
  local finished = {}
  local ok, err = pcall(process.all,
    function() time.sleep(0.05); finished[1] = true end,
    function() error("first failure") end,
    function() time.sleep(0.1); finished[3] = true end)
  eq(ok, false)
  assert(err:find("first failure"), err)
  assert(finished[1] and finished[3], "raised before every function finished")
end

function T.test_all_nested_and_with_receive()
  local me = process.self()
  local a, b = process.all(
    function()
      return process.all(function() time.sleep(0.01); return 1 end)
    end,
    function()
      process.send(me, "ping")
      return (process.receive(5))
    end)
  eq(a, 1); eq(b, "ping")
  eq(process.all(), nil)
  local x, y = process.all(process.self, function() return "lua" end)
  eq(x, me); eq(y, "lua")
end

local function expect_error(fn, needle)
  local ok, err = pcall(fn)
  eq(ok, false)
  assert(tostring(err):find(needle, 1, true), tostring(err))
end

function T.test_cannot_block_in_metamethod()
  local t = setmetatable({}, {__index = function(_, k) time.sleep(0); return k end})
  expect_error(function() return t.x end, "time.sleep: cannot block inside a metamethod")
  local u = setmetatable({}, {__add = function() process.receive(1) end})
  expect_error(function() return u + 1 end, "process.receive: cannot block inside a metamethod")
end

function T.test_cannot_block_in_sort_comparator()
  expect_error(function()
    table.sort({3, 1, 2}, function(a, b) time.sleep(0); return a < b end)
  end, "time.sleep: cannot block inside a sort comparator")
end

-- a generic for's iterator may block: the loop calls it as a Lua call
-- (the compiler's rewrite), which a yield can cross
function T.test_for_iterator_may_block()
  local function iter(_, i)
    time.sleep(0)
    if i < 3 then return i + 1 end
  end
  local seen = {}
  for i in iter, nil, 0 do seen[#seen + 1] = i end
  eq(table.concat(seen, ","), "1,2,3")
  -- a closure over a "file", read a line at a time by blocking calls
  local function lines(list)
    local n = 0
    return function()
      n = n + 1
      process.send(process.self(), list[n] or false)
      local line = process.receive()
      return line or nil
    end
  end
  local got = {}
  for line in lines({"a", "b"}) do got[#got + 1] = line end
  eq(table.concat(got, ","), "a,b")
  -- break, a false value, closures per iteration, the control variable
  local fns = {}
  for i, v in function(_, i) if i < 4 then return i + 1, i > 1 end end, nil, 0 do
    fns[i] = function() return v end
    if i == 3 then break end
  end
  eq(fns[1](), false); eq(fns[2](), false); eq(fns[3](), true); eq(fns[4], nil)
  -- a repeated name counts by position, as Lua does
  local function iter3(t, i) i = i + 1 if t[i] then return i, t[i] end end
  local n = 0
  for _, _ in iter3, {10, 20, 30}, 0 do n = n + 1 end
  eq(n, 3)
end

-- pairs, ipairs and next keep gopher-lua's TFORLOOP (their iterators are
-- Go functions): an iterator in their place that blocks is refused
function T.test_cannot_block_in_a_next_loop()
  local next = function(_, i)
    time.sleep(0)
    if i < 3 then return i + 1 end
  end
  expect_error(function() for _ in next, nil, 0 do end end,
    "time.sleep: cannot block inside a for iterator")
end

function T.test_cannot_block_in_go_callback()
  expect_error(function()
    string.gsub("abc", "%w", function(c) time.sleep(0); return c end)
  end, "time.sleep: cannot block inside a Go function")
end

function T.test_process_survives_refused_block()
  -- after the clear error, the process still blocks normally
  pcall(table.sort, {2, 1}, function(a, b) time.sleep(0); return a < b end)
  time.sleep(0.01)
  eq(process.receive(0), nil)
end

-- A blocking Go function at the bottom of a coroutine (its body, or
-- tail-called by it) returns the values it is resumed with: it once
-- returned luarun's private marker, or crashed gopher-lua.
function T.test_blocking_call_as_coroutine_body()
  local me = process.self()
  local function recv() return process.receive() end
  local function check(what, ok, msg, from)
    eq(ok, true, what .. ": ok"); eq(msg, what, what .. ": message"); eq(from, me, what .. ": sender")
  end
  for _, case in ipairs({
    {"pcall tail", function() return pcall(function() return process.receive() end) end},
    {"pcall go", function() return pcall(process.receive) end},
    {"pcall local tail", function() return pcall(recv) end},
    {"xpcall tail", function() return xpcall(function() return process.receive() end, debug and debug.traceback or tostring) end},
    {"resume tail", function() return coroutine.resume(coroutine.create(function() return process.receive() end)) end},
    {"resume go", function() return coroutine.resume(coroutine.create(process.receive)) end},
    {"wrap tail", function() return true, coroutine.wrap(function() return process.receive() end)() end},
    {"wrap go", function() return true, coroutine.wrap(process.receive)() end},
    {"all tail", function() return true, process.all(recv), me end},       -- all keeps first results
    {"all go", function() return true, process.all(process.receive), me end},
  }) do
    process.send(me, case[1])
    check(case[1], case[2]())
  end
  -- process.all keeps only the first result of each function
  process.send(me, "x"); process.send(me, "y")
  local a, b = process.all(function() return process.receive() end, process.receive)
  eq(a .. b, "xy", "all: first results")
end

-- An error raised by a Go function that luarun's prelude calls (the body
-- of a pcall, a coroutine, a process.all function) carries no prelude
-- position: the message is the function's own.
function T.test_go_function_errors_name_no_prelude_line()
  local function check(what, msg)
    if type(msg) ~= "string" or msg:find("prelude", 1, true) then
      error(what .. ": " .. tostring(msg), 2)
    end
  end
  local ok, msg = pcall(error, "plain")
  eq(ok, false, "pcall"); eq(msg, "plain", "pcall(error)")
  ok, msg = pcall(string.rep)
  check("pcall(string.rep)", msg)
  ok, msg = xpcall(string.rep, function(m) return "handled: " .. m end)
  check("xpcall", msg)
  ok, msg = coroutine.resume(coroutine.create(string.rep))
  eq(ok, false, "resume"); check("resume", msg)
  ok, msg = pcall(coroutine.wrap(string.rep))
  check("wrap", msg)
  ok, msg = pcall(process.all, string.rep)
  check("process.all", msg)
end

-- pcall and xpcall return exactly the values of the call, trailing nils
-- included, whether or not it blocked.
function T.test_pcall_result_count()
  eq(select("#", pcall(function() return nil end)), 2, "one nil")
  eq(select("#", pcall(function() end)), 1, "no values")
  eq(select("#", pcall(function() return nil, nil end)), 3, "two nils")
  eq(select("#", pcall(function() time.sleep(0) return nil end)), 2, "one nil after blocking")
  eq(select("#", xpcall(function() return 1, nil end, tostring)), 3, "xpcall")
  local ok, a, b, c = pcall(function() return 1, nil, 3 end)
  eq(ok, true); eq(a, 1); eq(b, nil); eq(c, 3)
end

return T
