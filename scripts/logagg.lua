-- logagg.lua: a log aggregation. Generates an access log (unless it is
-- there), fans its parsing out to parser processes, merges what they
-- count and writes a JSON summary.
--
--   luarun scripts/logagg.lua [lines] [parsers] [dir]
--     (default 200000 lines, 4 parsers, /tmp; the log is dir/access-<lines>.log)
--
-- Each parser gets a slice of the log (whole lines) in a message, walks
-- it with gmatch and match (lib/logparse.lua), and sends back its counts per service and
-- status and its total response time per service. The parsing is Lua
-- string work: with more workers (-w) the parsers run side by side.

local parse_log = require("lib.logparse") -- plain Lua: the harness runs it under lua5.4 too
local services = {"auth", "billing", "catalog", "search", "users"}

local function log_line(i)
  local svc = services[i % 5 + 1]
  return string.format("2026-11-23T10:%02d:%02dZ svc=%s path=/api/v%d/%s/%d status=%d ms=%d",
    i % 60, (i * 7) % 60, svc, i % 3 + 1, svc, i % 1000, i % 17 == 0 and 500 or (i % 7 == 0 and 404 or 200),
    (i * 37) % 900 + 10)
end

-- generate writes the log: lines, joined once.
local function generate(path, lines)
  local all = {}
  for i = 1, lines do all[i] = log_line(i) end
  all[#all + 1] = ""
  assert(fs.write(path, table.concat(all, "\n")))
end

function parse(boss, text)
  local counts, ms, lines, bad = parse_log(text)
  process.send(boss, {counts = counts, ms = ms, lines = lines, bad = bad})
end

-- slices cuts text into n pieces at line ends.
local function slices(text, n)
  local out, from, size = {}, 1, math.ceil(#text / n)
  while from <= #text do
    local to = text:find("\n", math.min(from + size, #text), true) or #text
    out[#out + 1] = text:sub(from, to)
    from = to + 1
  end
  return out
end

function main(lines, parsers, dir)
  lines, parsers, dir = tonumber(lines) or 200000, tonumber(parsers) or 4, dir or "/tmp"
  local path = string.format("%s/access-%d.log", dir, lines)
  local text = fs.read(path)
  if not text then
    generate(path, lines)
    text = assert(fs.read(path))
  end

  local t0 = time.monotonic()
  local me, pieces = process.self(), slices(text, parsers)
  for _, piece in ipairs(pieces) do process.spawn("parse", me, piece) end
  local total = {counts = {}, ms = {}, lines = 0, bad = 0}
  for _ = 1, #pieces do
    local r = process.receive()
    total.lines, total.bad = total.lines + r.lines, total.bad + r.bad
    for k, v in pairs(r.counts) do total.counts[k] = (total.counts[k] or 0) + v end
    for k, v in pairs(r.ms) do total.ms[k] = (total.ms[k] or 0) + v end
  end
  local took = time.monotonic() - t0

  local summary = {lines = total.lines, bad = total.bad, services = {}}
  for _, svc in ipairs(services) do
    local s = {requests = 0, errors = 0}
    for status, n in pairs({["200"] = 1, ["404"] = 1, ["500"] = 1}) do
      local c = total.counts[svc .. " " .. status] or 0
      s.requests = s.requests + c
      if status ~= "200" then s.errors = s.errors + c end
    end
    s.mean_ms = s.requests > 0 and math.floor(total.ms[svc] / s.requests + 0.5) or 0
    summary.services[svc] = s
  end
  assert(fs.write(dir .. "/summary.json", json.encode(summary)))
  print(string.format("%d lines (%.1f MB) parsed by %d processes in %.3f s; summary in %s/summary.json",
    total.lines, #text / 1e6, #pieces, took, dir))
  return summary
end
