-- The supervisor module: strategies, restart types, intensity, names,
-- which_children, stop, nested supervisors.
local T = {}

local check = require("lib.check")
local eq, has = check.eq, check.has

-- a child that does what it is told: "crash" or "quit"
function T.ctl()
  while true do
    local msg = process.receive()
    if msg == "crash" then error("told to crash", 0) end
    if msg == "quit" then return end
  end
end

local function pids(sup)
  local out = {}
  for i, c in ipairs(supervisor.which_children(sup)) do out[i] = c.pid or false end
  return out
end

-- wait_changed waits until child i's pid is no longer old (a new pid,
-- or false once it is not restarted); 20 s only bounds a hang
local function wait_changed(sup, i, old)
  local t0 = time.monotonic()
  repeat
    local now = pids(sup)[i]
    if now ~= old then return now end
    time.sleep(0.002)
  until time.monotonic() - t0 > 20
  error("child " .. i .. " still runs as " .. tostring(old), 3)
end

-- wait_restarted waits until child i has a new pid (not old)
local function wait_restarted(sup, i, old)
  local now = wait_changed(sup, i, old)
  if not now then error("child " .. i .. " was not restarted", 2) end
  return now
end

local function three(strategy)
  return supervisor.start{strategy = strategy, intensity = 10, period = 10, children = {
    {name = strategy .. "1", entry = "ctl"},
    {name = strategy .. "2", entry = "ctl"},
    {name = strategy .. "3", entry = "ctl"},
  }}
end

function T.test_one_for_one()
  local sup = three("one_for_one")
  local before = pids(sup)
  process.send(before[2], "crash")
  local after2 = wait_restarted(sup, 2, before[2])
  local after = pids(sup)
  eq(after[1], before[1]); eq(after[3], before[3]); eq(after[2], after2)
  eq(process.whereis("one_for_one2"), after2)
  eq(supervisor.which_children(sup)[2].restarts, 1)
  supervisor.stop(sup)
end

function T.test_one_for_all()
  local sup = three("one_for_all")
  local before = pids(sup)
  process.send(before[2], "crash")
  wait_restarted(sup, 2, before[2])
  local after = pids(sup)
  for i = 1, 3 do assert(after[i] ~= before[i], "child " .. i .. " restarted") end
  supervisor.stop(sup)
end

function T.test_rest_for_one()
  local sup = three("rest_for_one")
  local before = pids(sup)
  process.send(before[2], "crash")
  wait_restarted(sup, 2, before[2])
  wait_restarted(sup, 3, before[3])
  eq(pids(sup)[1], before[1])
  supervisor.stop(sup)
end

function T.test_restart_types()
  local sup = supervisor.start{children = {
    {name = "perm", entry = "ctl"},
    {name = "trans", entry = "ctl", restart = "transient"},
    {name = "temp", entry = "ctl", restart = "temporary"},
  }}
  local before = pids(sup)
  process.send(before[1], "quit") -- permanent: restarted even after a normal end
  wait_restarted(sup, 1, before[1])
  process.send(before[2], "quit") -- transient: not after a normal end
  process.send(before[3], "crash") -- temporary: never
  -- once the supervisor has handled each end, the child is gone, not
  -- restarted (a 50 ms sleep here could look before it had)
  eq(wait_changed(sup, 2, before[2]), false)
  eq(wait_changed(sup, 3, before[3]), false)
  supervisor.stop(sup)
end

function T.test_intensity_fails_the_supervisor()
  process.trap_exits(true)
  local sup = supervisor.start{intensity = 2, period = 10, children = {{name = "fragile", entry = "ctl"}}}
  for _ = 1, 3 do
    local pid = process.whereis("fragile")
    while not pid do time.sleep(0.002); pid = process.whereis("fragile") end
    process.send(pid, "crash")
    while process.whereis("fragile") == pid do time.sleep(0.002) end
  end
  local msg, from, kind = process.receive{match = function(_, from, kind) return kind == "exit" and from == sup end, timeout = 10}
  eq(kind, "exit")
  has(msg.reason, "reached maximum restart intensity (2 restarts in 10 s)")
  eq(process.whereis("fragile"), nil)
end

function T.test_nested_and_stop()
  local sup = supervisor.start{children = {
    {name = "outer-worker", entry = "ctl"},
    {name = "inner", supervisor = {children = {{name = "inner-worker", entry = "ctl"}}}},
  }}
  local inner = process.whereis("inner")
  assert(inner, "the nested supervisor is registered")
  local iw = process.whereis("inner-worker")
  eq(supervisor.which_children(inner)[1].pid, iw)
  process.send(iw, "crash")
  wait_restarted(inner, 1, iw)
  local ref = process.monitor(inner)
  eq(supervisor.stop(sup), true)
  local msg, _, kind = process.receive{match = function(m, _, k) return k == "down" and m.ref == ref end, timeout = 10}
  eq(kind, "down")
  eq(process.whereis("inner-worker"), nil)
  eq(process.whereis("outer-worker"), nil)
end

function T.test_bad_specs()
  local ok, err = pcall(supervisor.start, {strategy = "one_for_none", children = {}})
  eq(ok, false); has(err, "strategy must be")
  ok, err = pcall(supervisor.start, {children = {{name = "x"}}})
  eq(ok, false); has(err, "needs an entry, a file or a supervisor")
  ok, err = pcall(supervisor.start, {children = {{entry = "no_such_entry"}}})
  eq(ok, false); has(err, 'unknown entry "no_such_entry"')
end

return T
