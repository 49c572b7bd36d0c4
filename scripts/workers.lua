-- workers.lua: a fan-out/fan-in worker pool. The main process hands jobs
-- to W workers as they become free and collects the results in job order.
--
--   luarun scripts/workers.lua [jobs] [workers]    (default 20 jobs, 4 workers)

-- A job: count the primes below n (CPU work), then "write" it (a sleep).
local function primes_below(n)
  local count = 0
  for i = 2, n - 1 do
    local prime = true
    for d = 2, math.floor(math.sqrt(i)) do
      if i % d == 0 then prime = false; break end
    end
    if prime then count = count + 1 end
  end
  return count
end

function worker(boss)
  process.send(boss, {ready = true})
  while true do
    local job = process.receive()
    if job.stop then return end
    local result = primes_below(job.n)
    time.sleep(0.005)
    process.send(boss, {id = job.id, n = job.n, primes = result})
  end
end

function main(jobs, workers)
  jobs, workers = tonumber(jobs) or 20, tonumber(workers) or 4
  local me = process.self()
  local pool = {}
  for i = 1, workers do pool[i] = process.spawn("worker", me) end

  local next_job, results, pending = 1, {}, 0
  while next_job <= jobs or pending > 0 do
    local msg, from = process.receive()
    if msg.id then
      results[msg.id] = msg
      pending = pending - 1
    end
    if next_job <= jobs then
      process.send(from, {id = next_job, n = 1000 * next_job})
      next_job, pending = next_job + 1, pending + 1
    end
  end
  for _, pid in ipairs(pool) do process.send(pid, {stop = true}) end
  for _, pid in ipairs(pool) do process.wait(pid) end
  for id = 1, jobs do
    print(string.format("job %2d: %6d primes below %d", id, results[id].primes, results[id].n))
  end
end
