-- process.spawn / send / receive, and the values a message may carry.
local T = {}

local eq = require("lib.check").eq

function T.echo()
  while true do
    local msg, from = process.receive()
    if msg == "stop" then return "stopped" end
    process.send(from, msg)
  end
end

function T.sender(to, n)
  for i = 1, n do process.send(to, i) end
  return n
end

function T.test_order_from_one_sender()
  local me = process.self()
  local pid = process.spawn("sender", me, 200)
  for i = 1, 200 do
    local msg, from = process.receive()
    eq(msg, i, "message " .. i)
    eq(from, pid, "sender")
  end
end

function T.test_per_sender_order_many_senders()
  local me = process.self()
  local next_of = {}
  for s = 1, 5 do next_of[process.spawn("sender", me, 100)] = 1 end
  for _ = 1, 500 do
    local msg, from = process.receive()
    eq(msg, next_of[from], "message from " .. from)
    next_of[from] = msg + 1
  end
end

function T.test_echo_round_trip()
  local pid = process.spawn("echo")
  for i = 1, 50 do
    assert(process.send(pid, {n = i}))
    local reply = process.receive()
    eq(reply.n, i)
  end
  process.send(pid, "stop")
  local ok, res = process.wait(pid)
  eq(ok, true); eq(res, "stopped")
end

function T.test_receive_timeout()
  local t0 = time.monotonic()
  local msg, err = process.receive(0.05)
  eq(msg, nil); eq(err, "timeout")
  local dt = time.monotonic() - t0
  assert(dt >= 0.04, "returned after " .. dt .. " s")
  -- zero timeout: poll
  msg, err = process.receive(0)
  eq(msg, nil); eq(err, "timeout")
end

function T.test_receive_timeout_then_message()
  local me = process.self()
  process.spawn("sender", me, 1)
  local msg = process.receive(5)
  eq(msg, 1)
  -- the timer of that receive must not disturb the next one
  local m2, err = process.receive(0.05)
  eq(m2, nil); eq(err, "timeout")
end

function T.test_send_to_missing_process()
  local ok, err = process.send(999999999, "x")
  eq(ok, nil)
  assert(err:find("no process 999999999"), err)
  local pid = process.spawn("sender", process.self(), 0)
  process.wait(pid)
  ok, err = process.send(pid, "x")
  eq(ok, nil)
  assert(err:find("has ended"), err)
end

function T.test_every_value_type()
  local me = process.self()
  local value = {
    "str", 42, -7, 3.5, 1e300, true, false, "bin\0ary\255",
    nested = {list = {1, 2, {3, 4}}, map = {a = 1, ["key with space"] = "v"}},
    [10] = "ten", [2.5] = "float key", [true] = "bool key",
    empty = {},
  }
  local pid = process.spawn("echo")
  process.send(pid, value)
  local got = process.receive()
  process.send(pid, "stop")
  eq(got[1], "str"); eq(got[2], 42); eq(got[3], -7); eq(got[4], 3.5); eq(got[5], 1e300)
  eq(got[6], true); eq(got[7], false); eq(got[8], "bin\0ary\255")
  eq(got.nested.list[3][2], 4); eq(got.nested.map["key with space"], "v")
  eq(got[10], "ten"); eq(got[2.5], "float key"); eq(got[true], "bool key")
  eq(type(got.empty), "table"); eq(next(got.empty), nil)
  assert(got ~= value, "a message is a copy")
  eq(math.floor(got[2]), got[2], "integers stay integers")
end

function T.test_scalar_messages()
  local pid = process.spawn("echo")
  for _, v in ipairs({7, -3, 2^53, 3.25, "text", "", "bin\0", true, false}) do
    process.send(pid, v)
    local got = process.receive()
    eq(got, v, "echo of " .. tostring(v))
    eq(type(got), type(v))
  end
  process.send(pid, "stop")
end

function T.test_refused_values_name_their_path()
  local pid = process.self()
  local cases = {
    {{items = {1, 2, {cb = print}}}, "msg.items[3].cb: function cannot be sent"},
    {{co = coroutine.create(function() end)}, "msg.co: coroutine cannot be sent"},
    {{["a b"] = {print}}, 'msg["a b"][1]: function cannot be sent'},
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(process.send, pid, c[1])
    eq(ok, false)
    assert(err:find(c[2], 1, true), err)
  end
  local cyc = {}
  cyc.self = cyc
  local ok, err = pcall(process.send, pid, cyc)
  eq(ok, false)
  assert(err:find("msg.self: cyclic table cannot be sent", 1, true), err)
  ok, err = pcall(process.send, pid, nil)
  eq(ok, false)
  assert(err:find("message must not be nil", 1, true), err)
  -- the same refusal for spawn arguments
  ok, err = pcall(process.spawn, "echo", {f = print})
  eq(ok, false)
  assert(err:find("arg1.f: function cannot be sent", 1, true), err)
end

function T.test_self_is_stable_and_unique()
  local a = process.spawn("sender", process.self(), 0)
  local b = process.spawn("sender", process.self(), 0)
  assert(a ~= b and a ~= process.self())
  eq(process.self(), process.self())
  eq(math.floor(a), a)
end

function T.sleeper(d) time.sleep(d) end

-- math.huge as a timeout is no timeout: nothing is armed, and a loop of
-- such receives leaves no timer behind; NaN is refused.
function T.test_receive_huge_timeout()
  local me = process.self()
  for i = 1, 100 do
    process.send(me, i)
    local m, from = process.receive(math.huge)
    eq(m, i, "message"); eq(from, me, "sender")
  end
  local child = process.spawn("sleeper", 0.01)
  local ok = process.wait(child, math.huge)
  eq(ok, true, "wait with math.huge")
  local good, err = pcall(process.receive, 0/0)
  eq(good, false, "NaN refused")
  assert(tostring(err):find("NaN", 1, true), err)
end

return T
