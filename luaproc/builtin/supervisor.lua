-- The supervisor module: a process that starts children, watches them
-- through links (it traps exits) and restarts them, as Erlang/OTP's
-- supervisor does.
--
-- A supervisor is a process of the caller's own script running a built-in
-- entry (supervise, below; luaproc's resolve knows its name), so that its
-- children — entries of that script, or of files next to it — start as if
-- the caller spawned them. It runs once per Runtime in the template state;
-- like prelude.lua it must only read its upvalues and must not use globals.
--
-- Arguments: the process module, spawn_supervisor(spec, link) (Go:
-- spawns a supervisor process for spec, linked to the caller if link),
-- and unknown_option(t, known...) (Go: the message naming a key of t that
-- is not one of known — a misspelt option — or nil).
local process, spawn_supervisor, unknown_option = ...
local type, error, ipairs, tostring, unpack = type, error, ipairs, tostring, unpack
local table_remove, string_format = table.remove, string.format
local monotonic = time.monotonic

local STRATEGIES = {one_for_one = true, one_for_all = true, rest_for_one = true}
local RESTARTS = {permanent = true, transient = true, temporary = true}

-- check validates a spec and fills in its defaults; it raises on misuse.
local function check(spec, level)
  if type(spec) ~= "table" then error("supervisor.start: a spec table expected", level) end
  local bad = unknown_option(spec, "strategy", "intensity", "period", "children")
  if bad then error("supervisor.start: " .. bad, level) end
  spec.strategy = spec.strategy or "one_for_one"
  if not STRATEGIES[spec.strategy] then
    error("supervisor.start: strategy must be one_for_one, one_for_all or rest_for_one, got " .. tostring(spec.strategy), level)
  end
  spec.intensity = spec.intensity or 3
  spec.period = spec.period or 5
  if type(spec.intensity) ~= "number" or type(spec.period) ~= "number" or spec.period <= 0 then
    error("supervisor.start: intensity and period must be numbers (period > 0)", level)
  end
  if type(spec.children) ~= "table" then error("supervisor.start: children must be a list", level) end
  local names = {}
  for i, c in ipairs(spec.children) do
    if type(c) ~= "table" then error("supervisor.start: child " .. i .. " is not a table", level) end
    bad = unknown_option(c, "name", "entry", "file", "args", "restart", "supervisor", "node")
    if bad then error("supervisor.start: child " .. i .. ": " .. bad, level) end
    if c.supervisor then
      check(c.supervisor, level + 1)
    elseif type(c.entry) ~= "string" and type(c.file) ~= "string" then
      error("supervisor.start: child " .. i .. " needs an entry, a file or a supervisor", level)
    end
    if c.node ~= nil and (type(c.node) ~= "string" or type(c.file) ~= "string") then
      error("supervisor.start: child " .. i .. ": a node is a string, and needs a file (the script sent there)", level)
    end
    c.restart = c.restart or "permanent"
    if not RESTARTS[c.restart] then
      error("supervisor.start: child " .. i .. ": restart must be permanent, transient or temporary", level)
    end
    if c.name ~= nil then
      if type(c.name) ~= "string" or c.name == "" then error("supervisor.start: child " .. i .. ": a name is a string", level) end
      if names[c.name] then error("supervisor.start: two children named " .. c.name, level) end
      names[c.name] = true
    end
  end
  return spec
end

local M = {}

-- start starts a supervisor linked to the caller (if it fails, so does
-- the caller, unless it traps exits) and returns its PID once it has
-- started its children; it raises if a child cannot be started.
function M.start(spec)
  check(spec, 3)
  local sup = spawn_supervisor(spec, true)
  local ok, err = process.call(sup, {supervisor = "started"}, 30)
  if ok ~= true then error("supervisor.start: " .. tostring(ok == nil and err or ok), 2) end
  return sup
end

-- which_children lists {name=, pid=, restarts=} in start order (pid is
-- nil for a child that is not running).
function M.which_children(sup)
  local list, err = process.call(sup, {supervisor = "which_children"})
  if list == nil then return nil, err end
  return list
end

-- stop stops the children in reverse order, then the supervisor.
function M.stop(sup)
  local ok, err = process.call(sup, {supervisor = "stop"}, 60)
  if ok == nil then return nil, err end
  return true
end

-- The supervisor process ------------------------------------------------

-- pick_node is the node a child of node = node starts on: the node
-- itself, or for "*" the nodes that are up now, in turn — so children
-- spread over the nodes, and a child whose node went away restarts on
-- one that is up.
local function pick_node(state, node)
  if node ~= "*" then return node end
  local nodes = process.nodes()
  state.next_node = (state.next_node or 0) % #nodes + 1
  return nodes[state.next_node]
end

local function start_child(state, c)
  local pid, err
  if c.supervisor then -- started when its own children are (as M.start)
    pid, err = spawn_supervisor(c.supervisor, false)
    if pid then
      process.link(pid)
      local ok, e = process.call(pid, {supervisor = "started"}, 30)
      if ok ~= true then return nil, tostring(ok == nil and e or ok) end
    end
  elseif c.node then -- on another node (or any that is up: "*")
    pid, err = process.spawn_on(pick_node(state, c.node), c.file, c.entry, unpack(c.args or {}))
    if pid then process.link(pid) end
  elseif c.file then
    pid, err = process.spawn_file(c.file, c.entry, unpack(c.args or {}))
    if pid then process.link(pid) end
  else
    pid, err = process.spawn_link(c.entry, unpack(c.args or {}))
  end
  if not pid then return nil, err end
  c.pid = pid
  state.by_pid[pid] = c
  if c.name then process.register(c.name, pid) end
  return pid
end

-- stop_child stops a running child — a supervisor by asking it to stop
-- its own children first, any other by killing it — and waits for its
-- exit event.
local function stop_child(state, c)
  local pid = c.pid
  if not pid then return end
  state.by_pid[pid] = nil
  c.pid = nil
  state.stopping[pid] = true
  if not (c.supervisor and process.call(pid, {supervisor = "stop"}, 60)) then
    process.kill(pid, "shutdown")
  end
  while state.stopping[pid] do
    local msg, from, kind = process.receive{match = function(_, from, kind)
      return kind == "exit" and from == pid
    end, timeout = 10}
    if msg == nil then break end
    state.stopping[pid] = nil
  end
end

-- restarts_exceeded records a restart and says whether more than
-- intensity happened within period seconds.
local function restarts_exceeded(state)
  local now = monotonic()
  local times = state.restart_times
  times[#times + 1] = now
  while times[1] and times[1] < now - state.spec.period do table_remove(times, 1) end
  return #times > state.spec.intensity
end

local function stop_all(state, from_last)
  local children = state.spec.children
  for i = #children, from_last or 1, -1 do stop_child(state, children[i]) end
end

local function index_of(state, c)
  for i, x in ipairs(state.spec.children) do if x == c then return i end end
end

-- child_ended applies the strategy to a child's end; it returns an error
-- to end the supervisor with, or nil.
local function child_ended(state, c, reason)
  state.by_pid[c.pid] = nil
  c.pid = nil
  local abnormal = reason ~= "normal" and reason ~= "shutdown"
  if c.restart == "temporary" or (c.restart == "transient" and not abnormal) then
    return nil
  end
  if restarts_exceeded(state) then
    return string_format("reached maximum restart intensity (%d restarts in %g s); last: child %s: %s",
      state.spec.intensity, state.spec.period, c.name or c.entry or "?", tostring(reason))
  end
  local i = index_of(state, c)
  local first = i
  if state.spec.strategy == "one_for_all" then
    stop_all(state, 1)
    first = 1
  elseif state.spec.strategy == "rest_for_one" then
    stop_all(state, i + 1)
  end
  local children = state.spec.children
  for j = first, (state.spec.strategy == "one_for_one" and i or #children) do
    local x = children[j]
    if x.pid == nil then
      x.restarts = (x.restarts or 0) + 1
      local ok, err = start_child(state, x)
      if not ok then return "cannot restart child " .. (x.name or x.entry or j) .. ": " .. tostring(err) end
    end
  end
  return nil
end

local function which(state)
  local list = {}
  for i, c in ipairs(state.spec.children) do
    list[i] = {name = c.name or c.entry or c.file, pid = c.pid, restarts = c.restarts or 0}
  end
  return list
end

-- supervise is the supervisor process's entry point.
function M.supervise(spec)
  process.trap_exits(true)
  local state = {spec = spec, by_pid = {}, stopping = {}, restart_times = {}}
  local start_err
  for i, c in ipairs(spec.children) do
    c.restarts = 0
    local ok, err = start_child(state, c)
    if not ok then start_err = "child " .. (c.name or c.entry or i) .. ": " .. tostring(err) break end
  end
  while true do
    local msg, from, kind, call = process.receive()
    if kind == "call" and type(msg) == "table" and msg.supervisor then
      if msg.supervisor == "started" then
        if start_err then -- start raises it; we end normally, not killing the caller
          process.reply(call, start_err)
          stop_all(state)
          return
        end
        process.reply(call, true)
      elseif msg.supervisor == "which_children" then
        process.reply(call, which(state))
      elseif msg.supervisor == "stop" then
        stop_all(state)
        process.reply(call, true)
        return
      end
    elseif kind == "exit" then
      if from == 0 then -- the program is shutting down
        stop_all(state)
        return
      end
      local c = state.by_pid[from]
      if c then
        local err = child_ended(state, c, msg.reason)
        if err then
          stop_all(state)
          error(err, 0)
        end
      elseif not state.stopping[from] and msg.reason ~= "normal" then
        error(msg.reason, 0) -- the one that started us failed
      end
    end
  end
end

return M
