-- jobs.lua: a job runner that prints its summary when it stops, finished
-- or not: press Ctrl-C while it runs and it reports what got done.
--
--   luarun scripts/jobs.lua [jobs] [parallel]   (default 40 jobs, 4 at a time)
--
-- pool.map runs each job in a process of its own, at most `parallel` at
-- once, and reports each as it ends (on_result). The runner traps exits,
-- so the program's shutdown (Ctrl-C, SIGTERM) does not stop it: pool.map
-- then starts no more jobs and returns, the running ones (stopped at
-- once: they do not trap exits) failed, and the runner prints the
-- partial summary within the grace period.

-- job simulates a piece of work that takes 20-60 ms; every 9th fails.
function job(id)
  time.sleep(0.02 + id * 7 % 5 * 0.01)
  if id % 9 == 0 then error("job " .. id .. ": bad input", 0) end
  return id * id
end

function main(n, parallel)
  n, parallel = tonumber(n) or 40, tonumber(parallel) or 4
  process.trap_exits(true)
  local t0 = time.monotonic()
  local ids, count = {}, {done = 0, failed = 0, cancelled = 0, ["not started"] = 0}
  for i = 1, n do ids[i] = i end
  local sum = 0
  local function ended(id, result, err)
    if result then
      count.done, sum = count.done + 1, sum + result
      print(string.format("job %d done: %d", id, result))
    elseif tostring(err):find("shutting down") then -- stopped by the shutdown
      count.cancelled = count.cancelled + 1
    else
      count.failed = count.failed + 1
      print(string.format("job %d failed: %s", id, tostring(err)))
    end
  end
  local _, errors = pool.map("job", ids, {concurrency = parallel, on_result = ended})
  for _, err in pairs(errors or {}) do
    if err == "not started: shutdown" then count["not started"] = count["not started"] + 1 end
  end
  local _, _, kind = process.receive{timeout = 0, match = function(_, from, kind) return kind == "exit" and from == 0 end}
  print(string.format("%s after %.2f s: %d done, %d failed, %d cancelled, %d not started; sum of results %d",
    kind and "interrupted" or "finished", time.monotonic() - t0, count.done, count.failed, count.cancelled,
    count["not started"], sum))
end
