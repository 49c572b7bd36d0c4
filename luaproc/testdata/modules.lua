-- time, json, log, require, print and the standard library around them.
local T = {}

local eq = require("lib.check").eq

function T.test_time()
  local now = time.now()
  assert(now > 1.7e9, "time.now is seconds since the epoch: " .. now)
  local t0 = time.monotonic()
  time.sleep(0.05)
  local dt = time.monotonic() - t0
  assert(dt >= 0.045 and dt < 20, "slept " .. dt) -- 20 s: seconds, not ms or minutes; a loaded machine may be slow
  t0 = time.monotonic()
  process.sleep(0.02)
  assert(time.monotonic() - t0 >= 0.015)
  time.sleep(0)   -- zero and negative sleeps return
  time.sleep(-1)
  local ok, err = pcall(time.sleep, "soon")
  eq(ok, false)
  assert(err:find("number expected"), err)
end

function T.test_json_round_trip()
  local s = json.encode({b = {1, 2.5, "x"}, a = true, n = json.null})
  eq(s, '{"a":true,"b":[1,2.5,"x"],"n":null}')
  local v = json.decode('{"list":[1,null,3],"obj":{},"arr":[],"big":12345678901,"f":0.5}')
  eq(v.list[1], 1); eq(v.list[2], json.null); eq(v.list[3], 3)
  eq(v.big, 12345678901); eq(v.f, 0.5)
  eq(json.encode(v.obj), "{}")
  eq(json.encode(v.arr), "[]")
  eq(json.encode({}), "[]")
  eq(json.encode(json.object()), "{}")
  eq(json.encode("a\"b"), '"a\\"b"')
  eq(json.encode({[1] = "a", [3] = "c"}), '{"1":"a","3":"c"}')
end

function T.test_json_errors()
  local v, err = json.decode("{oops")
  eq(v, nil)
  assert(err:find("^json.decode: "), err)
  v, err = json.encode({f = print})
  eq(v, nil)
  assert(err:find("value.f: function cannot be sent", 1, true), err)
  v, err = json.encode(0/0)
  eq(v, nil)
  assert(err:find("NaN"), err)
end

function T.test_log_does_not_block_or_fail()
  log.info("hello", "user", "ann", "n", 3, "t", {a = 1})
  log.debug("dbg")
  log.warn("odd number of fields", "k")
  log.error("err", "fn", print)
end

function T.test_require_returns_the_globals()
  eq(require("process"), process)
  eq(require("json"), json)
  eq(require("string"), string)
  local ok, err = pcall(require, "socket")
  eq(ok, false)
  assert(err:find("module 'socket' not found"), err)
end

function T.test_standard_library()
  eq(string.format("%05.1f", 3.14159), "003.1")
  eq(table.concat({1, 2, 3}, ","), "1,2,3")
  eq(math.max(1, 5, 3), 5)
  eq(select("#", unpack({1, 2, 3})), 3)
  eq(type(os.time()), "number")       -- allowed in this runtime
  eq(type(io.write), "function")
end

return T
