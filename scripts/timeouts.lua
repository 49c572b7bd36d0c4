-- timeouts.lua: waiting with a deadline. process.receive and process.wait
-- take a timeout in seconds and return nil, "timeout" when it passes;
-- process.kill ends a process that will not finish by itself.
--
--   luarun scripts/timeouts.lua

function slow(seconds)
  time.sleep(seconds)
  return "finished after " .. seconds .. " s"
end

function stubborn()
  while true do process.receive() end -- never returns on its own
end

function main()
  -- 1. a receive that nobody answers
  local msg, err = process.receive(0.05)
  print("receive:", msg, err)

  -- 2. waiting for a process that is too slow, then for one in time
  local pid = process.spawn("slow", 0.2)
  print("wait 0.05 s:", process.wait(pid, 0.05))
  print("wait again: ", process.wait(pid, 1))

  -- 3. killing a process that ignores everything
  local s = process.spawn("stubborn")
  process.kill(s, "it had to go")
  print("killed:     ", process.wait(s))

  -- 4. a deadline around several things at once
  local t0 = time.monotonic()
  local a, b = process.all(
    function() local _, r = process.wait(process.spawn("slow", 0.1), 1); return r end,
    function() return (process.receive(0.1)) end)
  print(string.format("all:         %s / %s, in %.1f s", tostring(a), tostring(b), time.monotonic() - t0))
end
