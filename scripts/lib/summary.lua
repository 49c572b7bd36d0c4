-- lib/summary.lua: the module of scripts/report.lua (see there).
--
-- A summary of numbers (count, sum, smallest, largest) that can be merged:
-- each worker process summarises its own slice, and main merges the
-- summaries it receives. A summary is a plain table, so it travels in a
-- message as it is.
local M = {}

function M.new()
  return {n = 0, sum = 0, min = math.huge, max = -math.huge}
end

function M.add(s, x)
  s.n, s.sum = s.n + 1, s.sum + x
  if x < s.min then s.min = x end
  if x > s.max then s.max = x end
end

function M.merge(a, b)
  return {
    n = a.n + b.n, sum = a.sum + b.sum,
    min = math.min(a.min, b.min), max = math.max(a.max, b.max),
  }
end

function M.format(s)
  local mean = s.n > 0 and s.sum / s.n or 0
  return string.format("%d numbers, min %d, max %d, mean %.2f", s.n, s.min, s.max, mean)
end

return M
