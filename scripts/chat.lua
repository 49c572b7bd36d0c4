-- chat.lua: a TCP chat room.
--
--   luarun scripts/chat.lua [addr]              (default 127.0.0.1:7000)
--   nc 127.0.0.1 7000                           (in several terminals)
--
-- Each connection is a process of client: it asks for a name, then reads
-- the lines its user types and passes them to the room, while it writes
-- what the room sends it (process.all runs both loops in the one
-- process). The room process, registered as "room", keeps the members
-- and monitors them, so a client that leaves (even mid-line, or by
-- crashing) is removed and announced. /who lists the members, /quit
-- leaves.

-- room relays what members say to the others (main names it "room").
function room()
  local members = {} -- pid → name
  local function broadcast(text, except)
    for pid in pairs(members) do
      if pid ~= except then process.send(pid, {line = text}) end
    end
  end
  while true do
    local msg, from, kind = process.receive()
    if kind == "down" then
      if members[msg.pid] then
        broadcast("* " .. members[msg.pid] .. " left")
        members[msg.pid] = nil
      end
    elseif msg.join then
      members[from] = msg.join
      process.monitor(from)
      broadcast("* " .. msg.join .. " joined", from)
    elseif msg.say then
      broadcast("<" .. members[from] .. "> " .. msg.say, from)
    elseif msg.who then
      local names = {}
      for _, name in pairs(members) do names[#names + 1] = name end
      table.sort(names)
      process.send(from, {line = "* here: " .. table.concat(names, ", ")})
    end
  end
end

-- client runs one connection.
function client(c)
  c:write("name? ")
  local name = c:read("l")
  if not name or name == "" then return end
  local me = process.self()
  process.send("room", {join = name})
  c:write("* welcome, ", name, " (/who, /quit)\n")
  process.all(
    function() -- what the user types
      while true do
        local line = c:read("l")
        if not line or line == "/quit" then break end
        if line == "/who" then
          process.send("room", {who = true})
        elseif line ~= "" then
          process.send("room", {say = line})
        end
      end
      process.send(me, {quit = true}) -- ends the other loop
    end,
    function() -- what the room sends
      while true do
        local msg = process.receive()
        if msg.quit then break end
        if not c:write(msg.line, "\n") then break end
      end
    end)
  c:close()
end

function main(addr)
  -- Named here, before the first client can look for it: a room that
  -- named itself might not have run yet when the first client sends to
  -- "room", and that client's join would go nowhere.
  assert(process.register("room", process.spawn("room")))
  local l = assert(net.listen(addr or "127.0.0.1:7000"))
  print("chat listening on " .. l.addr)
  while true do
    local c = l:accept()
    if c then process.spawn("client", c) end
  end
end
