-- kvserver.lua: a key-value server registered under a name, used through
-- process.call by many clients at once.
--
--   luarun scripts/kvserver.lua [clients] [ops]   (default 8 clients, 1000 operations each)
--
-- The server holds the store; it is the only process that touches it, so
-- each request is atomic without locks. Clients find it by its name,
-- "kv", and every request is a call: the client waits for the answer,
-- and the other messages it might receive meanwhile stay queued. A call
-- to a server that has ended answers at once with an error instead of
-- waiting for the timeout.

-- server answers {op = ..., key = ..., value = ...} requests until it is
-- sent "stop" (or the program ends).
function server()
  process.register("kv")
  local store, count, served = {}, 0, 0
  local ops = {
    get = function(r) return store[r.key] end,
    put = function(r)
      if store[r.key] == nil then count = count + 1 end
      store[r.key] = r.value
      return true
    end,
    incr = function(r)
      if store[r.key] == nil then count = count + 1 end
      store[r.key] = (store[r.key] or 0) + (r.by or 1)
      return store[r.key]
    end,
    delete = function(r)
      if store[r.key] ~= nil then count = count - 1 end
      store[r.key] = nil
      return true
    end,
    size = function() return count end,
  }
  while true do
    local msg, _, kind, call = process.receive()
    if kind == "call" then
      local op = type(msg) == "table" and ops[msg.op]
      if op then
        process.reply(call, op(msg))
        served = served + 1
      else
        process.reply(call, {error = "unknown request: " .. tostring(type(msg) == "table" and msg.op or msg)})
      end
    elseif msg == "stop" then
      return served
    end
  end
end

-- kv is the client side: one function per operation.
local kv = {}
for _, op in ipairs({"get", "put", "incr", "delete", "size"}) do
  kv[op] = function(key, value)
    local answer, err = process.call("kv", {op = op, key = key, value = value, by = value})
    if err then error("kv." .. op .. ": " .. err, 2) end
    return answer
  end
end

-- client puts its own keys, bumps shared counters and reads back.
function client(id, ops)
  for i = 1, ops do
    if i % 4 == 0 then
      kv.incr("hits")
    elseif i % 4 == 1 then
      kv.put("client" .. id .. ":" .. i, i)
    elseif i % 4 == 2 then
      assert(kv.get("client" .. id .. ":" .. (i - 1)) == i - 1)
    else
      kv.delete("client" .. id .. ":" .. (i - 2))
    end
  end
  kv.incr("clients done")
end

function main(clients, ops)
  clients, ops = tonumber(clients) or 8, tonumber(ops) or 1000
  local srv = process.spawn_link("server")
  while not process.whereis("kv") do time.sleep(0.001) end
  local t0 = time.monotonic()
  local pids = {}
  for id = 1, clients do pids[id] = process.spawn("client", id, ops) end
  for _, pid in ipairs(pids) do assert(process.wait(pid)) end
  local took = time.monotonic() - t0
  local calls = clients * (ops + 1)
  print(string.format("%d clients made %d calls in %.2f s, %.1f us per call", clients, calls, took, took * 1e6 / calls))
  print(string.format("hits %d, clients done %d, keys left %d", kv.get("hits"), kv.get("clients done"), kv.size()))
  print("unknown request:", process.call("kv", {op = "frobnicate"}).error)
  process.send(srv, "stop")
  print("server served", select(2, process.wait(srv)))
  print("after it stopped:", pcall(kv.get, "hits"))
end
