-- report.lua: a program of two files. Worker processes each summarise a
-- slice of the numbers with the module lib/summary.lua and send the
-- summary back; main merges them and prints the report.
--
--   luarun scripts/report.lua [workers] [numbers]
--
-- require("lib.summary") finds scripts/lib/summary.lua: the search path
-- starts at the directory of the program's script, wherever luarun is
-- started from (LUA_PATH replaces it; ";;" in it stands for it).
--
-- The require is at the top level, which every process runs first (it
-- is module initialisation), so each worker has `summary` too. Spawning
-- belongs in main or another entry: a spawned process may not spawn from
-- the top level, which would otherwise run again in every child.
local summary = require("lib.summary")

-- The data: deterministic, so that the report is the same every run.
local function number(i) return (i * 7919) % 1000 end

function worker(boss, from, to)
  local s = summary.new()
  for i = from, to do summary.add(s, number(i)) end
  process.send(boss, s)
end

function main(workers, count)
  workers, count = tonumber(workers) or 4, tonumber(count) or 100000
  local per = math.ceil(count / workers)
  for w = 0, workers - 1 do
    local from = w * per + 1
    process.spawn("worker", process.self(), from, math.min(count, from + per - 1))
  end
  local total = summary.new()
  for _ = 1, workers do
    total = summary.merge(total, (process.receive()))
  end
  print(string.format("%d workers: %s", workers, summary.format(total)))
end
