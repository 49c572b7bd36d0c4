-- os.date's every conversion at fixed UTC times; TestOsDateAs51 compares
-- what this prints with lua5.1's (osdate51.txt).
local times = {0, 43200, 46800, 1700000000, 951782400, 978220800, 1703980800,
  1704067200, 1609459199, 4102444800, -1e12, -62167219200, -62135596800,
  2^53, 6.7e16, 1.9, -1.5, 1e9 + 12345}
local function q(s) -- %q differs between luarun's string library and lua's
  return '"' .. s:gsub("[%c\"\\]", function(c) return "\\" .. c:byte() end) .. '"'
end
for _, t in ipairs(times) do
  local parts = {}
  for c = 32, 126 do
    if c ~= 115 then -- %s: mktime of the broken-down time, local-zone dependent
      parts[#parts + 1] = q(os.date("!%" .. string.char(c), t))
    end
  end
  local mt = os.time(os.date("!*t", t)) -- C: mktime(gmtime(t)), or nil
  parts[#parts + 1] = tostring(mt == nil or os.date("!%s", t) == string.format("%d", mt))
  print(string.format("%.14g", t), table.concat(parts, " "))
end
local tm = os.date("!*t", 951782400)
print(tm.year, tm.month, tm.day, tm.hour, tm.min, tm.sec, tm.wday, tm.yday, tm.isdst)
print(os.date("!%Y", 1e17), os.date("!%Y", -6.8e16), os.date("!%Y", 1/0), os.date("!%Y", 0/0))
print(os.date("!a%", 0), os.date("!!%Y", 0), os.date("!*tx", 0), os.date("!%Ya\0%Y", 0), os.date("!%\0x", 0))
print(os.date("!%c", "86400"), type(os.date()), os.date("!%Y|%%|%5|%EY|%Oy|%_d", 1e9))
print(pcall(os.date, {}), select(2, pcall(os.date, "%Y", "x")):match("number expected, got string"))
