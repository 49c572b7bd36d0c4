-- Failure handling: monitors, links, exit signals, names, kinds,
-- selective receive, call and reply, timers.
local T = {}

local check = require("lib.check")
local eq, has = check.eq, check.has

function T.returns(v) return v end
function T.fails(msg) error(msg, 0) end
function T.fails_table() error({code = 3}) end
function T.fails_nil() error(nil) end
function T.forever() while true do process.receive() end end
function T.sends_then_fails(to, n)
  for i = 1, n do process.send(to, i) end
  error("done sending", 0)
end

-- receive with a deadline, for the tests: nothing should take long
local function next_event(...)
  local msg, from, kind, call = process.receive(10)
  assert(msg ~= nil or from ~= "timeout", "no event came")
  return msg, from, kind, call
end

function T.test_monitor_down_with_reason()
  -- told to fail only once monitored: monitoring a process that has
  -- already ended gives "noproc" (as in Erlang), not its reason
  local pid = process.spawn("fails_when_told", "went wrong")
  local ref = process.monitor(pid)
  process.send(pid, "go")
  local msg, from, kind = next_event()
  eq(kind, "down")
  eq(from, pid)
  eq(msg.pid, pid)
  eq(msg.ref, ref)
  eq(msg.reason, "went wrong")
end

function T.test_monitor_normal_and_noproc()
  local pid, ref = process.spawn_monitor("returns", 1)
  local msg, _, kind = next_event()
  eq(kind, "down"); eq(msg.ref, ref); eq(msg.reason, "normal")
  ref = process.monitor(pid) -- it has ended
  msg, _, kind = next_event()
  eq(kind, "down"); eq(msg.ref, ref); eq(msg.reason, "noproc")
  ref = process.monitor("nobody-has-this-name")
  msg = next_event()
  eq(msg.reason, "noproc")
end

function T.test_down_comes_after_the_messages()
  local pid, ref = process.spawn_monitor("sends_then_fails", process.self(), 50)
  for i = 1, 50 do
    local msg, from, kind = next_event()
    eq(kind, "message"); eq(msg, i); eq(from, pid)
  end
  local msg, _, kind = next_event()
  eq(kind, "down"); eq(msg.reason, "done sending")
end

function T.test_demonitor_even_when_queued()
  local pid = process.spawn("returns", 1)
  local ref = process.monitor(pid)
  -- wait until the down is queued (a match that takes nothing sees it)
  local queued = false
  local function spot(m, _, kind)
    if kind == "down" and m.ref == ref then queued = true end
    return false
  end
  for _ = 1, 2000 do
    process.receive{match = spot, timeout = 0.01}
    if queued then break end
  end
  assert(queued, "no down came")
  eq(process.demonitor(ref), true)
  eq(process.demonitor(ref), false)
  process.send(process.self(), "after")
  local msg, _, kind = next_event()
  eq(kind, "message"); eq(msg, "after")
end

function T.test_error_values()
  local _, ref = process.spawn_monitor("fails_table")
  local msg = next_event()
  eq(type(msg.reason), "table"); eq(msg.reason.code, 3)
  process.spawn_monitor("fails_nil")
  msg = next_event()
  eq(msg.reason, "nil error")
  local ok, err = process.wait(process.spawn("fails_nil"))
  eq(ok, false); eq(err, "nil error")
end

function T.linked_worker(boss)
  process.send(boss, "ready")
  process.receive() -- until the link kills it
end

function T.test_link_kills_and_traps()
  local me = process.self()
  local a = process.spawn("linked_worker", me)
  eq(next_event(), "ready")
  local watch = process.monitor(a)
  local b = process.spawn("fails", "b broke")
  process.link(a) -- a is linked to us; we trap, so we stay
  eq(process.trap_exits(true), false)
  -- a links to b through us? no: link a and b by a helper
  eq(process.trap_exits(true), true)
  process.unlink(a)
  process.kill(a, "enough")
  local msg, _, kind = next_event()
  eq(kind, "down"); eq(msg.reason, "killed: enough")
end

function T.chain(n, boss)
  if n == 0 then
    process.send(boss, "chain built")
    process.receive()
    error("end of the chain fails", 0)
  end
  process.spawn_link("chain", n - 1, boss)
  process.receive()
end

function T.test_a_failure_travels_a_chain()
  process.trap_exits(true)
  local head = process.spawn_link("chain", 5, process.self())
  eq(next_event(), "chain built")
  -- find the tail: the one that said "chain built"
  local _, tail = process.receive(0)
  process.kill(head, "cut")
  local msg, from, kind = next_event()
  eq(kind, "exit"); eq(from, head); eq(msg.reason, "killed: cut")
end

-- fails once told to: its link cannot end the other side before that
-- side has said "linked" (a 10 ms sleep here could end first under load)
function T.fails_when_told(msg) process.receive(); error(msg, 0) end

function T.linked_to_failure(boss)
  local pid = process.spawn_link("fails_when_told", "root cause")
  process.send(boss, "linked")
  process.send(pid, "go")
  process.receive()
end

function T.test_linked_failure_ends_the_other()
  local pid, ref = process.spawn_monitor("linked_to_failure", process.self())
  eq(next_event(), "linked")
  local msg, _, kind = next_event()
  eq(kind, "down")
  has(msg.reason, "linked process ")
  has(msg.reason, " failed: root cause")
end

function T.test_trapped_exit_is_an_event()
  process.trap_exits(true)
  local pid = process.spawn_link("fails", "trapped")
  local msg, from, kind = next_event()
  eq(kind, "exit"); eq(from, pid); eq(msg.pid, pid); eq(msg.reason, "trapped")
  pid = process.spawn_link("returns", 1)
  msg, from, kind = next_event()
  eq(kind, "exit"); eq(msg.reason, "normal")
  process.link(999999)
  msg = next_event()
  eq(msg.reason, "noproc")
end

function T.test_sent_messages_are_always_messages()
  process.send(process.self(), {pid = 1, ref = 2, reason = "forged"})
  local msg, _, kind = next_event()
  eq(kind, "message")
end

function T.named(boss)
  assert(process.register("named-server"))
  process.send(boss, "registered")
  local msg, from = process.receive()
  process.send(from, "got " .. msg)
end

function T.test_names()
  local me = process.self()
  local pid = process.spawn("named", me)
  eq(next_event(), "registered")
  eq(process.whereis("named-server"), pid)
  local ok, err = process.register("named-server")
  eq(ok, nil); has(err, "name is taken")
  assert(process.send("named-server", "hello"))
  eq(next_event(), "got hello")
  process.wait(pid)
  eq(process.whereis("named-server"), nil)
  local r, e = process.send("named-server", 1)
  eq(r, nil); has(e, 'no process registered as "named-server"')
  assert(process.register("mine"))
  eq(process.unregister("mine"), true)
  eq(process.unregister("mine"), false)
  local okk, errr = pcall(process.register, "")
  eq(okk, false)
end

function T.test_selective_receive_keeps_order()
  local me = process.self()
  for i = 1, 5 do process.send(me, i) end
  local msg = process.receive{match = function(m) return m == 4 end}
  eq(msg, 4)
  for _, want in ipairs({1, 2, 3, 5}) do eq(process.receive(0), want) end
  local m, err = process.receive{match = function() return false end, timeout = 0.02}
  eq(m, nil); eq(err, "timeout")
end

function T.later(to, v) time.sleep(0.02); process.send(to, v) end

function T.test_selective_receive_waits()
  local me = process.self()
  process.send(me, "noise")
  process.spawn("later", me, "wanted")
  local msg = process.receive{match = function(m) return m == "wanted" end, timeout = 5}
  eq(msg, "wanted")
  eq(process.receive(0), "noise")
end

function T.test_selective_receive_match_errors_raise()
  local me = process.self()
  process.send(me, "x")
  local ok, err = pcall(process.receive, {match = function(m) error("bad match") end})
  eq(ok, false); has(err, "bad match")
  process.receive(0)
  process.spawn("later", me, "y")
  ok, err = pcall(process.receive, {match = function(m) error("bad match later") end, timeout = 5})
  eq(ok, false); has(err, "bad match later")
end

function T.server()
  while true do
    local msg, from, kind, call = process.receive()
    if kind == "call" then
      if msg == "crash" then error("server crashed", 0) end
      if msg == "slow" then time.sleep(0.2) end
      if msg == "held" then -- replies once released, and then says so
        process.receive{match = function(m) return m == "release" end}
      end
      process.reply(call, {echo = msg, from = from})
      if msg == "held" then process.send(from, "replied late") end
      if msg == "twice" then
        local ok, err = pcall(process.reply, call, 1)
        process.send(from, err)
      end
    end
  end
end

function T.test_call_and_reply()
  local s = process.spawn("server")
  local r = process.call(s, "hi")
  eq(r.echo, "hi"); eq(r.from, process.self())
  r = process.call(s, "twice")
  eq(r.echo, "twice")
  has(next_event(), "answered already")
  local v, err = process.call(s, "held", 0.05) -- s replies only once released
  eq(v, nil); eq(err, "timeout")
  process.send(s, "release")
  eq(next_event(), "replied late") -- sent after the reply: the reply was dropped
  eq(process.receive(0), nil)
  v, err = process.call(s, "held", 0) -- 0: no waiting, as receive(0)
  eq(v, nil); eq(err, "timeout")
  process.send(s, "release")
  eq(next_event(), "replied late")
  v, err = process.call(s, "crash")
  eq(v, nil); has(err, "ended before replying: server crashed")
  v, err = process.call(s, "anyone?")
  eq(v, nil); has(err, "no process")
end

-- more targets than a process keeps call monitors for (64), some of
-- which end: every call is answered or fails with the end
function T.test_calls_to_many_targets()
  local servers = {}
  for i = 1, 100 do servers[i] = process.spawn("server") end
  for round = 1, 2 do
    for i, s in ipairs(servers) do eq(process.call(s, i).echo, i) end
  end
  for i = 1, 100, 2 do process.kill(servers[i], "retired") end
  for i, s in ipairs(servers) do
    local v, err = process.call(s, i)
    if i % 2 == 1 then eq(v, nil); has(err, "process " .. s)
    else eq(v.echo, i) end
  end
  for i = 2, 100, 2 do process.kill(servers[i]) end
end

-- three tasks wait on calls to one server, which crashes on the third:
-- all three calls end with its reason
-- takes nothing until told "go", then crashes on its first call
function T.gated_server()
  process.receive{match = function(m) return m == "go" end}
  local msg = process.receive()
  error("server crashed on " .. tostring(msg), 0)
end

-- three calls wait on one server when it crashes: one down ends all three
function T.test_calls_waiting_when_the_target_ends()
  local s = process.spawn("gated_server")
  local function call(msg)
    return function()
      local v, err = process.call(s, msg, 10)
      return v and "answered" or err
    end
  end
  -- process.all runs its functions in order: the three calls are out
  -- before the fourth lets the server go
  local r = {process.all(call("a"), call("b"), call("c"),
    function() return process.send(s, "go") end)}
  for i = 1, 3 do has(r[i], "ended before replying: server crashed on a") end
  eq(r[4], true)
end

function T.test_call_by_name_and_unknown_name()
  local s = process.spawn("server")
  process.register("echo-server", s)
  eq(process.call("echo-server", 7).echo, 7)
  local v, err = process.call("no-such-server", 1)
  eq(v, nil); has(err, "no process registered")
  process.kill(s)
end

function T.test_send_after_and_cancel()
  local me = process.self()
  local t0 = time.monotonic()
  local id = process.send_after(0.02, me, "tick")
  local msg, from = next_event()
  eq(msg, "tick"); eq(from, me)
  assert(time.monotonic() - t0 >= 0.019)
  id = process.send_after(5, me, "never")
  eq(process.cancel_timer(id), true)
  eq(process.cancel_timer(id), false)
  eq(process.receive(0.05), nil)
end

return T
