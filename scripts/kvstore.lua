-- kvstore.lua: an HTTP key-value service.
--
--   luarun scripts/kvstore.lua [addr]          (default 127.0.0.1:8080)
--   curl -X PUT -d 'hello' http://127.0.0.1:8080/kv/greeting
--   curl http://127.0.0.1:8080/kv/greeting      → hello
--   curl -X DELETE http://127.0.0.1:8080/kv/greeting
--   curl -i http://127.0.0.1:8080/kv/greeting   → 404
--   curl http://127.0.0.1:8080/stats            → {"keys":0,"served":...}
--
-- One store process, registered as "store", holds the data: it is the
-- only process that touches it, so every operation is atomic without a
-- lock. A supervisor runs it (and restarts it if it fails: the data then
-- starts empty). Each HTTP request runs as a process of handle, which
-- asks the store with process.call; a request the store does not answer
-- within a second gets 503. Ctrl-C drains the requests in flight, then
-- stops.

local supervisor = require("luarun.supervisor") -- not scripts/supervisor.lua next to this one

-- store answers {op=, key=, value=} calls until the program ends.
function store()
  local data, keys, served = {}, 0, 0
  local ops = {
    get = function(r) return {value = data[r.key]} end,
    put = function(r)
      if data[r.key] == nil then keys = keys + 1 end
      data[r.key] = r.value
      return {ok = true}
    end,
    delete = function(r)
      local had = data[r.key] ~= nil
      if had then keys = keys - 1 end
      data[r.key] = nil
      return {ok = had}
    end,
    stats = function() return {keys = keys, served = served} end,
  }
  while true do
    local msg, _, kind, call = process.receive()
    if kind == "call" then
      served = served + 1
      local op = ops[msg.op]
      process.reply(call, op and op(msg) or {error = "unknown op"})
    end
  end
end

local function ask(msg)
  local r, err = process.call("store", msg, 1)
  if not r then
    return nil, {status = 503, body = "store unavailable: " .. err .. "\n"}
  end
  return r
end

-- handle is one request: /kv/<key> (GET, PUT or POST, DELETE), /stats.
function handle(req)
  if req.path == "/stats" then
    local r, fail = ask({op = "stats"})
    return fail or {headers = {["Content-Type"] = "application/json"}, body = json.encode(r)}
  end
  local key = req.path:match("^/kv/(.+)$")
  if not key then
    return {status = 404, body = "not found: try /kv/<key> or /stats\n"}
  end
  local m = req.method
  if m == "GET" then
    local r, fail = ask({op = "get", key = key})
    if fail then return fail end
    if r.value == nil then return {status = 404, body = "no key " .. key .. "\n"} end
    return r.value
  elseif m == "PUT" or m == "POST" then
    local _, fail = ask({op = "put", key = key, value = req.body})
    return fail or {status = 204}
  elseif m == "DELETE" then
    local r, fail = ask({op = "delete", key = key})
    return fail or {status = r.ok and 204 or 404}
  end
  return {status = 405, headers = {Allow = "GET, PUT, POST, DELETE"}}
end

function main(addr)
  supervisor.start{
    strategy = "one_for_one", intensity = 5, period = 10,
    children = {{name = "store", entry = "store", restart = "permanent"}},
  }
  local srv = assert(http.serve(addr or "127.0.0.1:8080", "handle", {timeout = 5}))
  print("kvstore listening on http://" .. srv.addr)
  process.receive() -- serve until the program is stopped
end
