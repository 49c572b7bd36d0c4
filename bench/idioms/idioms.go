// Package idioms holds the Lua programs the benchmark harness times and
// luaproc's benchmarks count (instructions per op, bench/instrcount.sh),
// so that both measure the same code: the library idioms (bench/stdlib.go,
// luaproc's BenchmarkStdlib) and the ring (bench/workloads.go, luaproc's
// BenchmarkRing).
package idioms

// Ring: main(n, m) spawns n processes in a ring and passes a token m
// hops around it; it returns the seconds the hops took (after the ring
// is wired).
const Ring = `
function node(main_pid)
  local next_pid = process.receive()
  while true do
    local token = process.receive()
    if token == 0 then process.send(main_pid, "done") return end
    process.send(next_pid, token - 1)
  end
end
function main(n, m)
  local me, nodes = process.self(), {}
  for i = 1, n do nodes[i] = process.spawn("node", me) end
  for i = 1, n do process.send(nodes[i], nodes[i % n + 1]) end
  local t0 = time.monotonic()
  process.send(nodes[1], m)
  assert(process.receive() == "done")
  local dt = time.monotonic() - t0
  for i = 1, n do process.kill(nodes[i]) end
  return dt
end`

// Lua defines text(n) (n log-like lines of about 50 bytes, and the list
// of them) and a local table idioms: idioms[name](n) makes the inputs of
// that idiom at size n and returns a function that runs it once. It runs
// under lua5.4 and luarun; a driver is appended to it (one chunk).
const Lua = `
local unpack = unpack or table.unpack
local words = {"alpha", "beta", "gamma", "delta", "eps"}
local function text(n)
  local t = {}
  for i = 1, n do
    t[i] = "ts=" .. i .. " svc=" .. words[i % 5 + 1] .. " path=/api/v" .. (i % 7) .. "/items status=" .. (200 + i % 3) .. "  "
  end
  return table.concat(t, "\n"), t
end

local idioms = {}
-- library calls on long inputs: n lines of ~50 bytes
idioms.gsub = function(n) local s = text(n); return function() return (s:gsub("%s+", " ")) end end
idioms.find = function(n) local s = text(n); return function() return s:find("\n[^\n]*$") end end
idioms.match = function(n)
  local _, lines = text(n)
  return function()
    local k = 0
    for i = 1, #lines do
      if lines[i]:match("svc=(%w+) path=(%S+) status=(%d+)") then k = k + 1 end
    end
    return k
  end
end
idioms.gmatch = function(n)
  local s = text(n)
  return function() local k = 0; for _ in s:gmatch("[^\n]+") do k = k + 1 end return k end
end
idioms.upper = function(n) local s = text(n); return function() return #s:upper() end end
idioms.concat = function(n)
  local t = {}
  for i = 1, n do t[i] = "item" .. i end
  return function() return #table.concat(t, ",") end
end
idioms.sort = function(n)
  local t, x = {}, 42
  for i = 1, n do x = (x * 1103515245 + 12345) % 2147483648; t[i] = x end
  return function() table.sort(t); return t[1] end
end
-- a file of n lines read line by line: fs.lines under luarun (a command
-- that yields), io.lines under lua5.4
idioms.lines = function(n)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write((text(n)), "\n")
  f:close()
  local lines = fs and fs.lines or io.lines
  return function()
    local k = 0
    for _ in lines(path) do k = k + 1 end
    os.remove(path)
    return k
  end
end
-- calls in a loop: n calls, each short
idioms.format = function(n)
  return function() local s; for i = 1, n do s = string.format("%d %s %.2f", i, "abc", i / 3) end return s end
end
idioms.insert_remove = function(n)
  return function()
    local t = {}
    for i = 1, n do table.insert(t, i) end
    for i = 1, n do table.remove(t) end
    return #t
  end
end
idioms.sub_byte = function(n)
  local s = text(1)
  return function() local k = 0; for i = 1, n do k = k + #s:sub(i % 40 + 1, i % 40 + 5) + s:byte(i % 40 + 1) end return k end
end
-- the interpreter's own cost of a call in a loop, beside the rows above
idioms.empty_call = function(n)
  local f = function(a, b) return a end
  return function() local k; for i = 1, n do k = f(i, i) end return k end
end

`
