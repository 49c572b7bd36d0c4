-- supervisor.lua: a supervised pool of workers, some of which crash, and
-- the program still finishes all its work.
--
--   luarun scripts/supervisor.lua [jobs] [workers]   (default 100 jobs, 4 workers)
--
-- A job queue (registered as "jobs") hands out jobs through process.call
-- and monitors the worker that has each one: when a worker crashes, its
-- job goes back in the queue. The workers run under a supervisor, which
-- starts a new one for each that crashes. Every 7th job crashes its worker
-- the first time it is tried. (A supervisor's children are linked to it,
-- so their crashes are handled, not logged as crash reports.)

-- queue hands out jobs 1..n and collects their results. A worker that
-- asks while nothing is left waits: its call is answered later, when a
-- crashed worker's job comes back, or with false once all are done.
function queue(n)
  process.register("jobs")
  local todo, out, results, done, tries = {}, {}, {}, 0, {}
  for id = n, 1, -1 do todo[#todo + 1] = id end
  local idle, waiter = {}, nil -- parked "next" calls; main's "wait" call

  local function hand_out(call, worker)
    local id = table.remove(todo)
    local ref = process.monitor(worker)
    out[ref] = id
    tries[id] = (tries[id] or 0) + 1
    process.reply(call, {id = id, ref = ref, try = tries[id]})
  end

  while done < n or not waiter do
    local msg, from, kind, call = process.receive()
    if kind == "call" and msg == "next" then
      if #todo > 0 then hand_out(call, from) else idle[#idle + 1] = {call = call, from = from} end
    elseif kind == "call" and msg == "wait" then
      waiter = call
    elseif kind == "call" then -- {done = id, ref = ref, result = r}
      process.demonitor(msg.ref)
      out[msg.ref] = nil
      results[msg.done] = msg.result
      done = done + 1
      process.reply(call, true)
    elseif kind == "down" and out[msg.ref] then
      todo[#todo + 1] = out[msg.ref] -- the worker crashed: do it again
      out[msg.ref] = nil
      local parked = table.remove(idle, 1)
      if parked then hand_out(parked.call, parked.from) end
    end
  end
  for _, parked in ipairs(idle) do process.reply(parked.call, false) end
  local sum, crashes = 0, 0
  for id = 1, n do
    sum = sum + results[id]
    crashes = crashes + tries[id] - 1
  end
  process.reply(waiter, {sum = sum, crashes = crashes})
end

function worker()
  while true do
    local job = process.call("jobs", "next", 60)
    if not job then return end -- all done: a normal end, so no restart
    if job.id % 7 == 0 and job.try == 1 then error("job " .. job.id .. " crashed its worker") end
    process.call("jobs", {done = job.id, ref = job.ref, result = job.id * job.id})
  end
end

function main(jobs, workers)
  jobs, workers = tonumber(jobs) or 100, tonumber(workers) or 4
  process.spawn("queue", jobs)
  while not process.whereis("jobs") do time.sleep(0.001) end
  local children = {}
  for i = 1, workers do children[i] = {name = "worker" .. i, entry = "worker", restart = "transient"} end
  local sup = supervisor.start{strategy = "one_for_one", intensity = 1000, period = 1, children = children}
  local summary = process.call("jobs", "wait", 60)
  local restarts = 0
  for _, c in ipairs(supervisor.which_children(sup)) do restarts = restarts + c.restarts end
  supervisor.stop(sup)
  print(string.format("%d jobs done by %d workers; %d crashes, %d restarts; sum of squares %d",
    jobs, workers, summary.crashes, restarts, summary.sum))
end
