-- jobs.lua: a job runner that prints its summary when it stops, finished
-- or not: press Ctrl-C while it runs and it reports what got done.
--
--   luarun scripts/jobs.lua [jobs] [parallel]   (default 40 jobs, 4 at a time)
--
-- Each job is a process the runner monitors (spawn_monitor); a job sends
-- its result before it ends, so the result is always in the runner's
-- mailbox ahead of the job's down event. The runner traps exits, so the
-- program's shutdown (Ctrl-C, SIGTERM) reaches it as an exit event with
-- reason "shutdown" instead of stopping it: it then prints the partial
-- summary within the grace period. Jobs do not trap exits and are
-- stopped at once.

-- job simulates a piece of work that takes 20-60 ms; every 9th fails.
function job(runner, id)
  time.sleep(0.02 + id * 7 % 5 * 0.01)
  if id % 9 == 0 then error("job " .. id .. ": bad input", 0) end
  process.send(runner, {id = id, result = id * id})
end

function main(n, parallel)
  n, parallel = tonumber(n) or 40, tonumber(parallel) or 4
  process.trap_exits(true)
  local t0 = time.monotonic()
  local started, running, results = 0, {}, {}
  local done, failed, sum = 0, 0, 0

  local function start_next()
    if started == n then return end
    started = started + 1
    local _, ref = process.spawn_monitor("job", process.self(), started)
    running[ref] = started
  end

  local function summary(how)
    local cancelled = 0
    for _ in pairs(running) do cancelled = cancelled + 1 end
    print(string.format("%s after %.2f s: %d done, %d failed, %d cancelled, %d not started; sum of results %d",
      how, time.monotonic() - t0, done, failed, cancelled, n - started, sum))
  end

  for _ = 1, parallel do start_next() end
  while done + failed < n do
    local msg, _, kind = process.receive()
    if kind == "message" then
      results[msg.id] = msg.result
    elseif kind == "down" then
      local id = running[msg.ref]
      running[msg.ref] = nil
      if msg.reason == "normal" then
        done, sum = done + 1, sum + results[id]
        print(string.format("job %d done: %d", id, results[id]))
      else
        failed = failed + 1
        print(string.format("job %d failed: %s", id, tostring(msg.reason)))
      end
      start_next()
    elseif kind == "exit" and msg.reason == "shutdown" then
      summary("interrupted")
      return
    end
  end
  summary("finished")
end
