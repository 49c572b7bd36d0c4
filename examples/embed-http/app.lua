-- app.lua: the Lua side of examples/embed-http (docs/embedding.md walks
-- through it). Three entry points, each started by the Go program or by
-- another process: pool (a supervisor of renderers), renderer (one worker
-- of the pool), handle (one HTTP request).

-- renderer is a pool worker: it answers calls to render an item. A worker
-- keeps state between calls (how many it has rendered); if it crashes,
-- its supervisor starts a fresh one under the same name.
function renderer(id)
  local rendered = 0
  while true do
    local msg, _, kind, call = process.receive()
    if kind == "call" then
      if msg.value == "boom" then error("cannot render " .. msg.key) end
      rendered = rendered + 1
      process.reply(call, string.format("%s = %s (worker %d, item %d)\n",
        msg.key, msg.value, id, rendered))
    end
  end
end

-- pool starts a supervisor of n renderers registered as render1..renderN,
-- tells the Go side (ready, an Inbox's PID) that it is up, and lives until
-- the runtime shuts down: the supervisor is linked to it, and stops its
-- workers at shutdown.
function pool(n, ready)
  local children = {}
  for i = 1, n do
    children[i] = {name = "render" .. i, entry = "renderer", args = {i}}
  end
  supervisor.start{children = children, intensity = 10, period = 1}
  process.send(ready, n)
  while true do process.receive() end
end

-- handle serves one request: it asks the application's database (a Go
-- command, which yields this process until a goroutine answers), then a
-- pool worker picked by this process's PID, and returns status and body.
function handle(key, workers)
  local value, err = db.get(key)
  if err then return 500, "db: " .. err .. "\n" end
  if value == nil then return 404, "no item " .. key .. "\n" end
  local worker = "render" .. (process.self() % workers + 1)
  local body, cerr = process.call(worker, {key = key, value = value}, 5)
  if body == nil then return 503, "render: " .. cerr .. "\n" end
  return 200, body
end
