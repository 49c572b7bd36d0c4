-- require: package.path, loaded, preload, loaders, cycles, failures,
-- blocking while loading. testdata/ is the program's directory, so
-- modules live in testdata/req/.
local T = {}

local check = require("lib.check")
local eq, has = check.eq, check.has

function T.test_dotted_names_and_init_lua()
  local u = require("req.util")
  eq(u.double(21), 42)
  eq(u.name, "req.util")
  eq(u.path, nil) -- Lua 5.1 passes the loader the name only
  local pkg = require("req.pkg")
  eq(pkg.name, "req.pkg")
  eq(pkg.sub, "sub of req.pkg.sub")
  eq(package.loaded["req.pkg.sub"], "sub of req.pkg.sub")
end

function T.test_runs_once_per_process()
  local a, b = require("req.util"), require("req.util")
  eq(a, b)
  eq(req_util_loads, 1)
  eq(package.loaded["req.util"], a)
  -- another process runs it again, in its own globals
  local ok, loads = process.wait(process.spawn("load_util"))
  eq(ok, true)
  eq(loads, 1)
end

function T.load_util()
  require("req.util")
  require("req.util")
  return req_util_loads
end

function T.test_module_without_value_is_true()
  eq(require("req.noreturn"), true)
  eq(req_noreturn_ran, true)
  eq(require("req.sets_loaded"), "set by the module")
end

function T.test_a_module_may_block_while_loading()
  local t0 = time.monotonic()
  local m = require("req.slow")
  assert(time.monotonic() - t0 >= 0.015)
  eq(m.ok, true)
  -- inside pcall and a coroutine too
  package.loaded["req.slow"] = nil
  local ok, m2 = pcall(require, "req.slow")
  eq(ok, true)
  eq(m2.loads, 2)
  package.loaded["req.slow"] = nil
  local co = coroutine.wrap(function() return require("req.slow") end)
  eq(co().loads, 3)
end

function T.test_tasks_of_process_all_share_one_load()
  local a, b = process.all(
    function() return require("req.slow") end,
    function() return require("req.slow") end)
  eq(a, b)
  eq(req_slow_loads, 1)
end

function T.test_cycle_names_its_chain()
  local ok, err = pcall(require, "req.cycle_a")
  eq(ok, false)
  has(err, "testdata/req/cycle_b.lua:1: require cycle: req.cycle_a -> req.cycle_b -> req.cycle_a")
end

function T.test_missing_module_lists_every_path_tried()
  local ok, err = pcall(require, "req.nosuch")
  eq(ok, false)
  has(err, "module 'req.nosuch' not found:")
  has(err, "\n\tno field package.preload['req.nosuch']")
  has(err, "\n\tno file 'testdata/req/nosuch.lua'")
  has(err, "\n\tno file 'testdata/req/nosuch/init.lua'")
  -- the position is the caller's line
  has(err, "require.lua:")
end

function T.test_syntax_error_is_file_line()
  local ok, err = pcall(require, "req.syntax")
  eq(ok, false)
  has(err, "testdata/req/syntax.lua:3:")
  eq(err:find("testdata/req/syntax.lua:3:", 1, true), 1)
end

function T.test_failed_module_stays_failed_until_cleared()
  local ok, err = pcall(require, "req.fails")
  eq(ok, false)
  has(err, "testdata/req/fails.lua:2: first load fails")
  ok, err = pcall(require, "req.fails")
  eq(ok, false)
  has(err, "module 'req.fails' failed to load earlier in this process")
  package.loaded["req.fails"] = nil
  eq(require("req.fails"), "loaded on try 2")
end

function T.test_preload_and_custom_loaders()
  package.preload["virtual.mod"] = function(name) return {from = "preload", name = name} end
  local m = require("virtual.mod")
  eq(m.from, "preload")
  eq(m.name, "virtual.mod")
  table.insert(package.loaders, function(name)
    if name:sub(1, 4) == "gen." then
      return function(n) return "generated " .. n end
    end
    return "\n\tno generated module '" .. name .. "'"
  end)
  eq(require("gen.x"), "generated gen.x")
  local ok, err = pcall(require, "other")
  eq(ok, false)
  has(err, "\n\tno generated module 'other'")
end

function T.test_package_path_is_this_process_s()
  eq(package.path, "testdata/?.lua;testdata/?/init.lua")
  eq(package.cpath, "")
  eq(package.config:sub(1, 1), "/")
  package.path = "testdata/req/?.lua"
  eq(require("util").name, "util")
  package.path = 42
  local ok, err = pcall(require, "anything")
  eq(ok, false)
  has(err, "'package.path' must be a string")
end

function T.test_built_in_modules_are_loaded()
  eq(require("process"), process)
  eq(require("json"), json)
  eq(require("string"), string)
  eq(require("package"), package)
  eq(package.loaded._G, _G)
  eq(package.loaded.string, string)
  eq(package.loaded["luarun.time"], time)
  eq(package.loaded.nosuch, nil)
end

function T.test_bad_arguments()
  local ok, err = pcall(require)
  eq(ok, false)
  has(err, "bad argument #1 to 'require' (string expected, got no value)")
  ok, err = pcall(require, {})
  has(err, "got table")
end

function T.test_a_cycle_across_tasks_is_named()
  -- each task loads one module, which then requires the other's
  package.preload.ping = function() time.sleep(0.01); return {pong = require("pong")} end
  package.preload.pong = function() time.sleep(0.01); return {ping = require("ping")} end
  -- whichever task closes the loop gets the cycle; the other then sees
  -- the module that task was loading fail
  local a, b = process.all(
    function() return select(2, pcall(require, "ping")) end,
    function() return select(2, pcall(require, "pong")) end)
  local cycle, other = a, b
  if not tostring(a):find("require cycle: ", 1, true) then cycle, other = b, a end
  has(cycle, "require cycle: ")
  has(other, "failed to load earlier in this process")
end

function T.test_a_load_left_in_a_dropped_coroutine_fails_its_waiters()
  package.preload.yields = function() coroutine.yield("paused"); return {} end
  local ok, err = pcall(process.all,
    function()
      local co = coroutine.create(function() return require("yields") end)
      eq(select(2, coroutine.resume(co)), "paused")
      time.sleep(0.02) -- then ends, leaving co suspended
    end,
    function()
      time.sleep(0.01)
      return require("yields")
    end)
  eq(ok, false)
  has(err, "module 'yields' failed to load earlier in this process")
end

function T.test_package_fields_the_script_removes_stay_removed()
  package.loaders = nil
  local ok, err = pcall(require, "anything")
  eq(ok, false)
  has(err, "'package.loaders' must be a table")
  eq(package.loaders, nil)
end

function T.test_package_path_removed()
  package.path = nil
  local ok, err = pcall(require, "anything")
  eq(ok, false)
  has(err, "'package.path' must be a string")
  package.preload = nil
  ok, err = pcall(require, "anything")
  has(err, "'package.preload' must be a table")
end

function T.test_built_in_modules_whatever_the_globals_hold()
  time = 0
  function log() end
  eq(type(require("time")), "table")
  eq(type(require("time").now), "function")
  eq(type(require("log").info), "function")
  eq(package.loaded.time, require("time"))
  json = nil
  local j = require("json")
  eq(rawget(_G, "json"), nil) -- require does not bring the global back
  eq(json, nil)               -- nor does reading it: the global is gone, as in Lua 5.1
  eq(package.loaded.json, j)
end

return T
