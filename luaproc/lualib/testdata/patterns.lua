-- Cases of string.find, match, gmatch and gsub whose results must be
-- Lua 5.1's: run by lualib's tests under luarun's library and under
-- lua5.1, and the two outputs compared line by line.

local function show(...)
  local n = select("#", ...)
  local t = {}
  for i = 1, n do
    local v = select(i, ...)
    if type(v) == "string" then
      t[i] = '"' .. v:gsub("[%c\\\"\128-\255]", function(c) return "\\" .. c:byte() end) .. '"'
    elseif type(v) == "table" or type(v) == "function" then
      t[i] = type(v) -- not its address
    else
      t[i] = tostring(v)
    end
  end
  return table.concat(t, ", ")
end

local function run(name, f, ...)
  local res = show(pcall(f, ...))
  -- gopher-lua names a function called by pcall "f", Lua 5.1 "'?'"
  res = res:gsub("bad argument #(%d) to %S+ ", "bad argument #%1 ")
  res = res:gsub('"[^"]-([%w_]+%.lua:%d+:)', '"%1') -- the file's name, not where it is
  -- gopher-lua's argument checks name the nearest Lua function's line
  -- even when pcall called the function (Lua 5.1: no position)
  res = res:gsub('"[%w_]+%.lua:%d+: bad argument', '"bad argument')
  print(name .. "(" .. show(...) .. ") -> " .. res)
end

local function gm(s, p)
  local out = {}
  for a, b, c in string.gmatch(s, p) do
    out[#out + 1] = show(a, b, c)
    if #out > 50 then break end
  end
  return table.concat(out, " | ")
end

local subjects = {"", "a", "hello world", "  x  y  ", "abc123def", "a.b.c", "(foo(bar))baz",
  "THE (quick) fox", "key=val; k2=v2", "\0a\0", "aaa", "x\ny\nz\n", "[]%^$"}
local patterns = {"", "a", "^a", "a$", "^$", ".", "%a+", "%d+", "%s*", "%s+", "%w-", "(%w+)=(%w+)",
  "()a()", "%bxy", "%b()", "%f[%w]%w+", "%f[%W]", "[a-c]+", "[^%s]+", "[%]]", "[]]", "[^]]",
  "a?b?c?", "(a*(.)%w(%s*))", "%.", "[%a_][%w_]*", "(.)%1", "%z", "[%z]", "x*$", "^(%s*)(.-)(%s*)$",
  ".-", ".*", "a-b", "(%d)(%d)(%d)", "%u%l+", "%p", "%c", "%x+", "[%d%.]+", "%S+", "$a", "^^", "a%$",
  "[a-]", "[-a]", "[a%-z]", "%", "[a", "(", ")", "%1", "(()", "%b", "%f", "%fx", "(a)%2",
  "((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))"}

for _, s in ipairs(subjects) do
  for _, p in ipairs(patterns) do
    run("find", string.find, s, p)
    run("match", string.match, s, p)
    run("gsub", string.gsub, s, p, "<%0>")
    run("gmatch", gm, s, p)
  end
end

-- init positions, plain find, counts
for _, init in ipairs({-100, -3, -1, 0, 1, 2, 5, 11, 12, 100}) do
  run("find", string.find, "hello world", "o", init)
  run("find", string.find, "hello world", "", init)
  run("find", string.find, "hello world", "l+", init)
  run("match", string.match, "hello world", "(o)(.)", init)
  run("find", string.find, "a.b", ".", init, true)
end
run("find", string.find, "a+b", "+", 1, true)
run("find", string.find, "a+b", "a+", 1, false)
run("find", string.find, 12345, 3)
run("find", string.find, "x", nil)
run("find", string.find, nil, "x")
for _, n in ipairs({0, 1, 2, -1, 100}) do
  run("gsub", string.gsub, "abc abc abc", "b", "X", n)
  run("gsub", string.gsub, "abc abc abc", "%w+", "%0%0", n)
end

-- replacements: strings with captures, tables, functions, bad values
run("gsub", string.gsub, "hello world", "(o)", "[%1]")
run("gsub", string.gsub, "hello world", "o", "%%")
run("gsub", string.gsub, "hello world", "o", "%")
run("gsub", string.gsub, "hello world", "o", "%2")
run("gsub", string.gsub, "hello world", "(o)", "%2")
run("gsub", string.gsub, "hello world", "()o", "%1")
run("gsub", string.gsub, "hello world", "%w+", {hello = "HI", world = false})
run("gsub", string.gsub, "hello world", "%w+", {hello = 1.5})
run("gsub", string.gsub, "hello world", "%w+", {hello = true})
run("gsub", string.gsub, "hello world", "(%w)(%w*)", function(a, b) return b .. a end)
run("gsub", string.gsub, "hello world", "%w+", function() end)
run("gsub", string.gsub, "hello world", "%w+", function() return {} end)
run("gsub", string.gsub, "hello world", "%w+", 42)
run("gsub", string.gsub, "hello world", "%w+", true)
run("gsub", string.gsub, "abc", "", "-")
run("gsub", string.gsub, "abc", "%w*", "-")
run("gsub", string.gsub, "abc", "b*", "-")
run("gsub", string.gsub, "abc", "^", ">")
run("gsub", string.gsub, "abc", "$", "<")
run("gsub", string.gsub, "abc", "^b", "X")
run("gsub", string.gsub, "hello", "l", "L")
run("gsub", string.gsub, "hello", "l", "%%L")
run("gsub", string.gsub, "a,b,,c", ",", ";")
run("gsub", string.gsub, "x = 1, y = 2", "(%w+) = (%w+)", "%2 = %1")
run("gmatch", gm, "abc", "^a")
run("gmatch", gm, "one two  three", "%a+")
run("gmatch", gm, "k=v, a=b", "(%w+)=(%w+)")
run("gmatch", gm, "abc", "")
run("gmatch", gm, "abc", "()")

-- table.concat
run("concat", table.concat, {1, 2, "3", 4.5}, "-")
run("concat", table.concat, {1, {}, 3})
run("concat", table.concat, {}, ",")
run("concat", table.concat, {"a", "b", "c"}, ",", 2, 3)
run("concat", table.concat, {"a", "b"}, ",", 3)
run("concat", table.concat, {"a", "b"}, ",", 2, 1)
run("concat", table.concat, {"a"}, ",", 1, 2)
run("concat", table.concat, {"x", "y"}, 1)
run("concat", table.concat, nil)
run("concat", table.concat, {}, {})
run("concat", table.concat, {"a", "b", nil, "d"}, ",", 1, 2)
local many = {}
for i = 1, 100000 do many[i] = i % 10 end
run("concat", function() return #table.concat(many, ", ") end)

-- string.format
local fmts = {"%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%.3d", "%i", "%x", "%X", "%#x", "%o", "%#o", "%u",
  "%c", "%5c|", "%e", "%.2e", "%E", "%f", "%.2f", "%10.3f|", "%-10.1f|", "%+.1f", "%g", "%.3g", "%G", "%#g",
  "%10g|", "%s", "%5s|", "%-5s|", "%.2s", "%5.1s|", "%q", "%%", "%y", "%", "%123d", "%1.123f", "%------d", "%-+ #0d"}
local vals = {0, 1, -1, 42, 3.7, -3.7, 255, 65, 1e10, 0.1, 123456789, 0.25, 1e-5, "12", "abc", "a\nb\0c\"\\\r", "héllo"}
-- lua5.1's sprintf stops at a zero byte: %c of 0 and %s of a string
-- with "\0" lose it and what follows; luarun keeps them (a documented
-- difference), so those cases are left out
local function c_string_quirk(f, v)
  return (f:find("c") and tonumber(v) and math.floor(tonumber(v)) % 256 == 0)
    or (f:find("s") and type(v) == "string" and v:find("\0"))
end
for _, f in ipairs(fmts) do
  for _, v in ipairs(vals) do
    if not c_string_quirk(f, v) then run("format", string.format, f, v) end
  end
end
run("format", string.format, "%d %s %.2f", 1, "x", 2.5)
run("format", string.format, "%s", nil)
run("format", string.format, "%s", {})
run("format", string.format, "%d", "x")
run("format", string.format, "no specs", 1, 2)
print(pcall(string.format, "%5.2f|%-8s|%3d", 1/0, "é", 2))
print(pcall(string.format, "%f %e %g %5.1E|", 1/0, -1/0, 1/0, -1/0))

-- upper and lower: the C locale's letters only
run("upper", string.upper, "héllo Wörld 123")
run("lower", string.lower, "HÉLLO WÖRLD 123")
run("upper", string.upper, "")
run("upper", string.upper, 42)

-- review cases: a ")" pattern in gsub's plain path, format's unsigned
-- conversions with + and space, and values from 2^63 up
run("gsub", string.gsub, "a)b", ")", "x")
run("format", string.format, "%+x|% x|%+05x|%+u", 255, 255, 255, 5)
print(pcall(string.format, "%x %u", 2^63 + 2^62, 1e19))
