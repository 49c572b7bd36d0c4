-- A million idle processes: start N (default 1,000,000) processes that
-- wait in receive, print the resident set, message each once and hear
-- back. BENCHMARKS.md records it:
--   /usr/bin/time -f "%e s, peak RSS %M KB" go run . bench/million.lua 1000000
function idle(main)
  process.send(main, true)
  local msg = process.receive()
  process.send(main, msg)
end
function main(n)
  n = tonumber(n) or 1000000
  local me, pids = process.self(), {}
  local t0 = time.monotonic()
  for i = 1, n do pids[i] = process.spawn("idle", me) end
  for i = 1, n do process.receive() end
  local t1 = time.monotonic()
  print(string.format("started %d idle processes in %.2f s (%.1f us each)", n, t1 - t0, (t1 - t0) / n * 1e6))
  print("VmRSS with all idle: " .. fs.read("/proc/self/status"):match("VmRSS:%s*(%d+)") .. " KB")
  for i = 1, n do process.send(pids[i], "hello") end
  for i = 1, n do assert(process.receive() == "hello") end
  print(string.format("messaged each once and heard back in %.2f s", time.monotonic() - t1))
end
