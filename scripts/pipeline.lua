-- pipeline.lua: stages connected by messages. A source emits numbers, a
-- squarer squares them, a filter keeps the even ones, and a sink sums
-- them and reports to the main process; "eof" flows through to end each
-- stage in turn.
--
--   luarun scripts/pipeline.lua [count]      (default 100)

function source(next_pid, count)
  for i = 1, count do process.send(next_pid, i) end
  process.send(next_pid, "eof")
end

-- A stage applies f to each item and forwards what f returns (nil: drop).
local function stage(next_pid, f)
  while true do
    local item = process.receive()
    if item == "eof" then process.send(next_pid, "eof"); return end
    local out = f(item)
    if out ~= nil then process.send(next_pid, out) end
  end
end

function squarer(next_pid) stage(next_pid, function(x) return x * x end) end
function evens(next_pid) stage(next_pid, function(x) if x % 2 == 0 then return x end end) end

function sink(report_to)
  local sum, n = 0, 0
  while true do
    local item = process.receive()
    if item == "eof" then break end
    sum, n = sum + item, n + 1
  end
  process.send(report_to, {sum = sum, n = n})
end

function main(count)
  count = tonumber(count) or 100
  -- built back to front, so each stage knows the next one's PID
  local s = process.spawn("sink", process.self())
  local e = process.spawn("evens", s)
  local q = process.spawn("squarer", e)
  process.spawn("source", q, count)
  local r = process.receive()
  print(string.format("sum of the %d even squares of 1..%d: %d", r.n, count, r.sum))
end
