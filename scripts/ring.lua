-- ring.lua: N processes in a ring pass a token M hops in total and the
-- time per hop is printed: the classic benchmark of a process runtime.
--
--   luarun scripts/ring.lua [N] [M]           (default 1000 processes, 100000 hops)
--   luarun -w 1 scripts/ring.lua 1000 1000000

-- Each node learns its successor, then forwards the token, counting down;
-- the node that sees 0 tells the main process.
function node(main_pid)
  local next_pid = process.receive()
  while true do
    local token = process.receive()
    if token == 0 then
      process.send(main_pid, "done")
    else
      process.send(next_pid, token - 1)
    end
    if token <= 0 then return end
  end
end

function main(n, m)
  n, m = tonumber(n) or 1000, tonumber(m) or 100000
  local me = process.self()
  local t0 = time.monotonic()
  local nodes = {}
  for i = 1, n do nodes[i] = process.spawn("node", me) end
  for i = 1, n do process.send(nodes[i], nodes[i % n + 1]) end
  local t1 = time.monotonic()
  process.send(nodes[1], m)
  assert(process.receive() == "done")
  local t2 = time.monotonic()
  for i = 1, n do process.kill(nodes[i]) end
  print(string.format("ring of %d processes: %d hops in %.3f s, %.0f ns per hop (spawn %.1f us each)",
    n, m, t2 - t1, (t2 - t1) / m * 1e9, (t1 - t0) / n * 1e6))
end
