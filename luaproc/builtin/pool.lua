-- The pool module: pool.map(entry, items [, opts]) runs the script's
-- entry (a global function's name, as process.spawn takes) on each item,
-- each in a process of its own, at most opts.concurrency (default 8) at
-- once, and returns results, errors:
--
--   results[i]  the first value entry(items[i], ...opts.args) returned
--               (nil when it failed);
--   errors      nil when every item succeeded, else a table with
--               errors[i] = the error of each item that failed (raised,
--               killed, out of memory), as process.wait gives it.
--
-- Each process is monitored: a crash, a kill or any other end of one
-- arrives as a down event, so an item is never lost and map never waits
-- for a process that is gone; its result is then taken with
-- process.wait, which answers at once for an ended child. The down
-- events are taken with a selective receive, so the caller's other
-- messages stay queued, in order. A spawn that fails (an entry the
-- script does not have, an item that cannot be sent, the process limit)
-- raises, after killing the processes already running.
--
-- opts.on_result, if given, is called in the caller as each item ends,
-- in the order they end: on_result(i, result, err) (for progress).
--
-- At the program's shutdown, a caller that traps exits (and so keeps
-- running) gets map's answer early: no item is started after the
-- shutdown's exit event arrives, the items not started get the error
-- "not started: shutdown", and the event stays queued for the caller's
-- own receive.
--
-- If the calling process is killed during map, the processes in flight
-- (at most concurrency of them) run to their end.
--
-- Runs once per Runtime in the template state: like prelude.lua it must
-- only read its upvalues and must not use globals.
local process, unknown_option = ...
local type, error, tostring, unpack, pairs = type, error, tostring, unpack, pairs
local pcall, math_floor = pcall, math.floor
local spawn_monitor = process.spawn_monitor

local M = {}

-- SHUTTING_DOWN is spawn's error while the runtime shuts down
-- (modules.go's spawnError).
local SHUTTING_DOWN = "the runtime is shutting down"

-- DEFAULT_CONCURRENCY is how many items run at once unless opts say.
local DEFAULT_CONCURRENCY = 8


-- options reads map's options: the concurrency and the extra arguments.
local function options(opts)
  if opts == nil then return DEFAULT_CONCURRENCY, {}, nil end
  if type(opts) ~= "table" then
    error("pool.map: argument 3: table expected, got " .. type(opts), 3)
  end
  local bad = unknown_option(opts, "concurrency", "args", "on_result")
  if bad then error("pool.map: " .. bad, 3) end
  local n = opts.concurrency
  if n == nil then
    n = DEFAULT_CONCURRENCY
  elseif type(n) ~= "number" or n < 1 or n ~= math_floor(n) then
    error("pool.map: concurrency must be a whole number, at least 1, got " .. tostring(n), 3)
  end
  local args = opts.args
  if args == nil then
    args = {}
  elseif type(args) ~= "table" then
    error("pool.map: args must be a list, got " .. type(args), 3)
  end
  local on_result = opts.on_result
  if on_result ~= nil and type(on_result) ~= "function" then
    error("pool.map: on_result must be a function, got " .. type(on_result), 3)
  end
  return n, args, on_result
end

-- stop kills the processes still running (after a failed spawn).
local function stop(running)
  for _, r in pairs(running) do process.kill(r.pid, "pool.map failed") end
end

function M.map(entry, items, opts)
  if type(entry) ~= "string" then
    error("pool.map: argument 1: entry name (string) expected, got " .. type(entry), 2)
  end
  if type(items) ~= "table" then
    error("pool.map: argument 2: list of items expected, got " .. type(items), 2)
  end
  local n, args, on_result = options(opts)
  local results, errors = {}, nil
  local running, count, nxt, total = {}, 0, 1, #items
  local shutdown = false
  local function ours(msg, from, kind)
    if kind == "exit" and from == 0 then shutdown = true end -- left queued
    return kind == "down" and running[msg.ref] ~= nil
  end
  while (nxt <= total and not shutdown) or count > 0 do
    while count < n and nxt <= total and not shutdown do
      -- pcall: an item that cannot be sent raises in spawn_monitor
      local sent, pid, ref = pcall(spawn_monitor, entry, items[nxt], unpack(args))
      if sent and not pid and ref == SHUTTING_DOWN then
        -- the shutdown refuses spawns before its exit event reaches
        -- this process: the same as that event
        shutdown = true
        break
      end
      if not sent or not pid then
        stop(running)
        error("pool.map: item " .. nxt .. ": " .. tostring(sent and ref or pid), 2)
      end
      running[ref] = {pid = pid, i = nxt}
      count, nxt = count + 1, nxt + 1
    end
    if count == 0 then break end -- shut down with nothing running
    local down = process.receive{match = ours}
    local r = running[down.ref]
    running[down.ref], count = nil, count - 1
    local ok, value = process.wait(r.pid)
    if ok then
      results[r.i] = value
    else
      errors = errors or {}
      errors[r.i] = value
    end
    if on_result then on_result(r.i, results[r.i], not ok and value or nil) end
  end
  for i = nxt, total do
    errors = errors or {}
    errors[i] = "not started: shutdown"
  end
  return results, errors
end

return M
