-- errors.lua: failure handled, not fatal. pcall catches an error raised
-- after a blocking call; a failing child is observed through
-- process.wait; xpcall adds context. The script itself ends normally.
--
--   luarun scripts/errors.lua

local function parse_config(text)
  time.sleep(0.01) -- blocking inside pcall is fine
  local cfg = json.decode(text)
  if cfg == nil then error("config is not JSON") end
  return cfg.port or error("config has no port")
end

function child(n)
  time.sleep(0.01)
  if n > 2 then error("child " .. n .. " refuses") end
  return n * 10
end

function main()
  for _, text in ipairs({'{"port": 8080}', '{}', 'oops'}) do
    local ok, res = pcall(parse_config, text)
    print(string.format("pcall(parse_config, %-16q) -> %s, %s", text, tostring(ok), res))
  end

  for n = 1, 3 do
    local ok, res = process.wait(process.spawn("child", n))
    print(string.format("child %d: ok=%s result=%s", n, tostring(ok), tostring(res)))
  end

  local ok, msg = xpcall(function() return nil + 1 end,
    function(e) return "handled: " .. e end)
  print("xpcall:", ok, msg)

  local sent, err = process.send(999999, "anyone?")
  print("send to a missing process:", sent, err)
end
