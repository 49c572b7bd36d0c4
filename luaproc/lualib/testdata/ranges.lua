-- Integer arguments beyond a C int or long (huge, NaN, 2^31, 2^40...):
-- the built-ins 5.1 writes in C convert them as lua5.1 on x86-64 does
-- (lua/cint.go). TestHugeRangesAsLua51 compares with ranges.out.
-- Not string.rep's count: luarun keeps it a Go int, so that a huge one
-- raises "not enough memory" (memory_test.go) where 5.1 would repeat
-- (int)n times (2^32 + 3 copies: 3).
local function show(label, ok, ...)
  local parts = {label, tostring(ok), select('#', ...)}
  for i = 1, math.min(select('#', ...), 5) do
    local v = select(i, ...)
    if type(v) == "string" then
      v = v:gsub("to '[^']*'", "to ?") -- pcall names the function differently
      v = '"' .. v:gsub("%c", function(c) return "\\" .. c:byte() end) .. '"'
    end
    parts[#parts + 1] = tostring(v)
  end
  print(table.concat(parts, " "))
end
local huge, nan, t3 = math.huge, 0/0, {1, 2, 3}
local cases = {
  {"unpack 2..huge", unpack, t3, 2, huge},
  {"unpack -huge..2", unpack, t3, -huge, 2},
  {"unpack 1..1e8", unpack, t3, 1, 1e8},
  {"unpack 1..2^31", unpack, {}, 1, 2^31},
  {"unpack 2^31..2^31+2", unpack, {}, 2^31, 2^31 + 2},
  {"unpack nan..2", unpack, {}, nan, 2},
  {"unpack 1..nan", unpack, {1, 2}, 1, nan},
  {"unpack huge..huge", unpack, {}, huge, huge},
  {"unpack 1..-huge", unpack, {}, 1, -huge},
  {"unpack 2^32+1..2^32+2", unpack, t3, 2^32 + 1, 2^32 + 2},
  {"sub 2,huge", string.sub, "hello", 2, huge},
  {"sub -huge,2", string.sub, "hello", -huge, 2},
  {"sub nan,2", string.sub, "hello", nan, 2},
  {"sub 2^53,2^63", string.sub, "hello", 2^53, 2^63},
  {"sub -2^63,2^64", string.sub, "hello", -2^63, 2^64},
  {"sub huge", string.sub, "hello", huge},
  {"sub 2^32+2", string.sub, "hello", 2^32 + 2},
  {"concat 1,huge", table.concat, t3, ",", 1, huge},
  {"concat 2,2^31", table.concat, t3, ",", 2, 2^31},
  {"concat -huge,1", table.concat, t3, ",", -huge, 1},
  {"concat nan,1", table.concat, t3, ",", nan, 1},
  {"concat 2^32+1,2^32+3", table.concat, t3, ",", 2^32 + 1, 2^32 + 3},
  {"select huge", select, huge, 1, 2},
  {"select -huge", select, -huge, 1, 2},
  {"select 2^31", select, 2^31, 1, 2},
  {"select -2^31", select, -2^31, 1, 2},
  {"select nan", select, nan, 1, 2},
  {"select 2^32+2", select, 2^32 + 2, "a", "b", "c"},
  {"rep -huge", string.rep, "x", -huge},
  {"rep nan", string.rep, "x", nan},
  {"rep 2^40", string.rep, "", 2^40},
  {"byte 1,huge", string.byte, "hello", 1, huge},
  {"byte -huge,2", string.byte, "hello", -huge, 2},
  {"byte 2^40,2^41", string.byte, "hello", 2^40, 2^41},
  {"byte -1", string.byte, "hello", -1},
  {"byte 0", string.byte, "hello", 0},
  {"char 2^40", string.char, 2^40},
  {"char 2^32+65", string.char, 2^32 + 65},
  {"char 256", string.char, 65, 256},
  {"char -1", string.char, -1},
  {"find huge", string.find, "hello", "l", huge},
  {"find -huge", string.find, "hello", "l", -huge},
  {"find nan", string.find, "hello", "l", nan},
  {"gsub huge", string.gsub, "hello", "l", "L", huge},
  {"gsub 2^32+1", string.gsub, "hello", "l", "L", 2^32 + 1},
  {"random 1,huge", math.random, 1, huge},
  {"random 2^32+1", math.random, 2^32 + 1},
  {"remove 2^40", table.remove, {1}, 2^40},
  {"remove -1", table.remove, {1, 2}, -1},
  {"remove empty", table.remove, {}},
  {"ldexp 2^32+3", math.ldexp, 1, 2^32 + 3},
  {"tonumber base 2^32+16", tonumber, "ff", 2^32 + 16},
  {"format %d huge", string.format, "%d", huge},
}
for _, c in ipairs(cases) do
  show(c[1], pcall(c[2], unpack(c, 3, table.maxn(c))))
end
