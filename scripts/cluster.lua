-- cluster.lua: counts the primes below a limit with workers spread over
-- every node of a luarun cluster.
--
-- A supervisor keeps a pool of workers on the nodes that are up (child
-- spec node = "*": the script is sent to each node, which need not have
-- it). Drivers on this node hand the workers ranges as calls and add up
-- the counts. Kill a node (even with kill -9) while it runs: its workers'
-- calls fail with "noconnection" within a few seconds, their ranges are
-- handed out again, the supervisor restarts the workers on the nodes that
-- are still up, and the count comes out right.
--
-- Three nodes on one machine, in three terminals (b and c first, or
-- within a few seconds):
--
--   luarun --cluster embedded --node a scripts/cluster.lua 3
--   luarun --cluster nats://127.0.0.1:4222 --node b scripts/cluster.lua serve
--   luarun --cluster nats://127.0.0.1:4222 --node c scripts/cluster.lua serve
--
-- The first starts a NATS server inside itself and waits until 3 nodes
-- are up; the others only serve (Ctrl-C ends them). Arguments of the
-- first: nodes to wait for [1], limit [3000000], workers per node [2],
-- range size [30000].

local supervisor = require("luarun.supervisor") -- not scripts/supervisor.lua, the example next to this one

local function is_prime(n)
  if n < 2 then return false end
  if n % 2 == 0 then return n == 2 end
  for d = 3, math.floor(math.sqrt(n)), 2 do
    if n % d == 0 then return false end
  end
  return true
end

-- worker answers calls {from, to} with the count of primes in the range.
function worker()
  while true do
    local range, _, kind, call = process.receive()
    if kind == "call" then
      local count = 0
      for n = range[1], range[2] do
        if is_prime(n) then count = count + 1 end
      end
      process.reply(call, {count = count, node = process.node()})
    end
  end
end

-- driver i takes ranges from the coordinator and has worker i count
-- them; a range whose worker failed goes back to the coordinator.
function driver(coordinator, sup, i)
  while true do
    local range = process.call(coordinator, "next", 30)
    if not range then return end
    local w = supervisor.which_children(sup)[i].pid
    local r, err = process.call(w, range, 10)
    if r then
      process.send(coordinator, {range = range, count = r.count, node = r.node})
    else
      print(string.format("range %d-%d failed on worker %d (%s): handed out again", range[1], range[2], i, err))
      process.send(coordinator, {retry = range})
      time.sleep(0.2) -- the supervisor restarts the worker meanwhile
    end
  end
end

local function wait_for_nodes(want)
  local nodes = process.nodes()
  while #nodes < want do
    print(string.format("waiting for %d nodes (up: %s)", want, table.concat(nodes, ", ")))
    time.sleep(1)
    nodes = process.nodes()
  end
  return nodes
end

function main(want, limit, per_node, size)
  if want == "serve" then
    print("node " .. process.node() .. " serves the cluster (Ctrl-C ends it)")
    process.receive() -- spawn requests are served meanwhile
    return
  end
  want, limit = tonumber(want) or 1, tonumber(limit) or 3000000
  per_node, size = tonumber(per_node) or 2, tonumber(size) or 30000
  local nodes = wait_for_nodes(want)
  local children = {}
  for i = 1, #nodes * per_node do
    children[i] = {file = "cluster.lua", entry = "worker", node = "*"}
  end
  local sup = supervisor.start{strategy = "one_for_one", intensity = 50, period = 10, children = children}
  local t0 = time.monotonic()

  local todo, jobs = {}, 0
  for from = 1, limit - 1, size do
    todo[#todo + 1] = {from, math.min(from + size - 1, limit - 1)}
    jobs = jobs + 1
  end
  local me = process.self()
  for i = 1, #children do process.spawn("driver", me, sup, i) end

  local total, done, by_node = 0, 0, {}
  while done < jobs do
    local msg, _, kind, call = process.receive()
    if kind == "call" then
      process.reply(call, table.remove(todo) or false)
    elseif msg.retry then
      todo[#todo + 1] = msg.retry
    else
      total, done = total + msg.count, done + 1
      by_node[msg.node] = (by_node[msg.node] or 0) + 1
      print(string.format("job %d/%d on %s", done, jobs, msg.node))
    end
  end
  for node, n in pairs(by_node) do print(string.format("  %s counted %d ranges", node, n)) end
  print(string.format("primes below %d: %d (%d nodes, %.2f s)", limit, total, #nodes, time.monotonic() - t0))
  os.exit(0) -- ends the drivers and the pool with the program
end
