-- lib/logparse.lua: the parse loop of logagg.lua, in plain Lua 5.1 (no
-- luarun calls), so that the benchmark harness runs the very same code
-- under lua5.4 as a baseline.
--
-- parse(text) counts the access-log lines of text: per "service status",
-- the total response time per service, the lines it read and those it
-- could not.
return function(text)
  local counts, ms, lines, bad = {}, {}, 0, 0
  for line in text:gmatch("[^\n]+") do
    local svc, status, t = line:match("svc=(%w+) path=%S+ status=(%d+) ms=(%d+)")
    if svc then
      lines = lines + 1
      local key = svc .. " " .. status
      counts[key] = (counts[key] or 0) + 1
      ms[svc] = (ms[svc] or 0) + tonumber(t)
    else
      bad = bad + 1
    end
  end
  return counts, ms, lines, bad
end
