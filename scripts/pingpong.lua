-- pingpong.lua: two processes bounce a message back and forth; shows
-- process.send / process.receive and the sender's PID that comes with
-- every message.
--
--   luarun scripts/pingpong.lua [rounds]      (default 10000)

function pong()
  while true do
    local n, from = process.receive()
    if n == 0 then return end
    process.send(from, n)
  end
end

function main(rounds)
  rounds = tonumber(rounds) or 10000
  local peer = process.spawn("pong")
  local t0 = time.monotonic()
  for i = 1, rounds do
    process.send(peer, i)
    local n = process.receive()
    assert(n == i, "out of order")
  end
  local dt = time.monotonic() - t0
  process.send(peer, 0)
  process.wait(peer)
  print(string.format("%d round trips in %.3f s: %.0f ns per round trip",
    rounds, dt, dt / rounds * 1e9))
end
