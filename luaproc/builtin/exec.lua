-- exec.start's handles, over the exec.start and exec:* commands (Go,
-- commands/execstream.go): each method is a blocking call, which yields
-- the process, never a worker. A handle is a table of closures over the
-- command layer's number for the command (a metatable would be a table
-- every process shares); only the process that started the command can
-- use it. Lines are taken in batches (what the command has written so
-- far, at least one line) and handed out one per call of the iterator;
-- the batch belongs to the handle, so a loop that breaks and a later
-- h:lines() loop lose no line.
--
-- Runs once per Runtime in the template state: it must only read its
-- upvalues and must not use globals.
local raw_start, raw_lines, raw_write, raw_close, raw_wait, raw_kill = ...
local error, table_concat = error, table.concat

-- handle makes the handle of command id.
local function handle(id)
  local h, batch, next_line, ended, no_end = {}, {}, 1, false, false

  -- line is the next line of stdout, nil at its end; a failed read raises
  local function line()
    while true do
      local l = batch[next_line]
      if l then
        batch[next_line], next_line = nil, next_line + 1
        return l
      end
      if ended then return nil end
      local lines, last_no_end = raw_lines(id)
      if not lines then error(last_no_end, 2) end
      if lines[1] == nil then ended = true end
      batch, next_line, no_end = lines, 1, last_no_end
    end
  end

  function h:lines() return line end
  function h:write(s)
    local ok, err = raw_write(id, s)
    if not ok then return nil, err end
    return h
  end
  function h:close_stdin() return raw_close(id) end
  -- wait's stdout starts with the lines taken and not handed out
  function h:wait()
    local r, err = raw_wait(id)
    if r and batch[next_line] then
      local taken = table_concat(batch, "\n", next_line) .. (no_end and "" or "\n")
      batch = {}
      r.stdout = taken .. r.stdout
    end
    return r, err
  end
  function h:kill() return raw_kill(id) end
  return h
end

local function start(cmd, args, opts)
  local id, err = raw_start(cmd, args, opts)
  if not id then return nil, err end
  return handle(id)
end

return start
