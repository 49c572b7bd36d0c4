-- hello.lua: the smallest luarun program with two processes. The main
-- process spawns a greeter, waits for it and prints what it returned.
--
--   luarun scripts/hello.lua            → hello, world (from process 2)
--   luarun scripts/hello.lua Ada        → hello, Ada (from process 2)

function greet(who)
  time.sleep(0.01) -- blocking calls yield: the worker runs others meanwhile
  return "hello, " .. who .. " (from process " .. process.self() .. ")"
end

function main(name)
  local pid = process.spawn("greet", name or "world")
  local ok, greeting = process.wait(pid)
  assert(ok, greeting)
  print(greeting)
end
