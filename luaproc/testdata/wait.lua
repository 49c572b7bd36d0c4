-- process.wait and process.kill.
local T = {}

local eq = require("lib.check").eq

function T.returns(a, b) time.sleep(0.01); return a, b, {x = 1} end
function T.returns_now(a) return a end
function T.fails() time.sleep(0.01); error("boom") end
function T.fails_table() error({code = 7}) end
function T.forever() while true do process.receive() end end
function T.busy() local n = 0; while true do n = n + 1 end end

function T.test_wait_returned()
  local pid = process.spawn("returns", "a", 2)
  local ok, a, b, c = process.wait(pid)
  eq(ok, true); eq(a, "a"); eq(b, 2); eq(c.x, 1)
end

function T.test_wait_already_ended()
  local pid, ref = process.spawn_monitor("returns_now", "early")
  local down = process.receive{match = function(m, _, kind) return kind == "down" and m.ref == ref end, timeout = 10}
  eq(down.reason, "normal") -- it has ended
  local ok, a = process.wait(pid)
  eq(ok, true); eq(a, "early")
end

function T.test_wait_failed()
  local pid = process.spawn("fails")
  local ok, err = process.wait(pid)
  eq(ok, false)
  assert(err:find("wait.lua:8: boom", 1, true), err)
end

function T.test_wait_failed_with_table()
  local ok, err = process.wait(process.spawn("fails_table"))
  eq(ok, false)
  eq(type(err), "string")
end

function T.test_wait_killed()
  local pid = process.spawn("forever")
  time.sleep(0.01)
  eq(process.kill(pid, "enough"), true)
  local ok, err = process.wait(pid)
  eq(ok, false); eq(err, "killed: enough")
end

function T.test_kill_busy_loop()
  local pid = process.spawn("busy")
  time.sleep(0.02)
  process.kill(pid)
  local ok, err = process.wait(pid, 5)
  eq(ok, false); eq(err, "killed")
end

function T.test_wait_timeout()
  local pid = process.spawn("forever")
  local ok, err = process.wait(pid, 0.05)
  eq(ok, nil); eq(err, "timeout")
  process.kill(pid)
  ok, err = process.wait(pid, 0)
  -- either already killed or still dying: both answers are honest
  assert((ok == false and err == "killed") or (ok == nil and err == "timeout"), tostring(err))
end

function T.test_kill_missing()
  local ok, err = process.kill(999999999)
  eq(ok, nil)
  assert(err:find("no process"), err)
end

function T.test_wait_missing()
  local ok, err = process.wait(999999999)
  eq(ok, false)
  assert(err:find("no process"), err)
end

return T
