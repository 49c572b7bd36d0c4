-- fs.open's file handles and fs.lines, over the fs.open and file:*
-- commands (Go, commands/fsfile.go): each method is a blocking call; a
-- lines iterator (Go, luaproc/fsfile.go) reads batches of about 64 KB.
-- Every method passes the commands how many bytes the handle's lines
-- iterator read ahead and did not hand out (read_ahead), for them to seek
-- back over first: a read, write or seek starts where a loop stopped.
-- Once the command has run, the read-ahead is dropped (settle); a method
-- that raises before it runs (bad arguments) leaves it to the loop.
local raw_open, raw_read, raw_write, raw_seek, raw_close, wrap, id_of, lines_iterator, read_ahead, drop_read_ahead = ...
local error = error

local methods = {}

local function settle(id, ...)
  drop_read_ahead(id)
  return ...
end

function methods.read(f, ...)
  local id = id_of(f)
  return settle(id, raw_read(id, read_ahead(id), ...))
end

function methods.write(f, ...)
  local id = id_of(f)
  local ok, err = settle(id, raw_write(id, read_ahead(id), ...))
  if not ok then return nil, err end
  return f
end

function methods.seek(f, whence, offset)
  local id = id_of(f)
  return settle(id, raw_seek(id, read_ahead(id), whence, offset))
end

function methods.close(f)
  local id = id_of(f)
  return settle(id, raw_close(id, read_ahead(id)))
end

function methods.lines(f) return lines_iterator(id_of(f), false) end

local function open(path, mode)
  local id, err = raw_open(path, mode)
  if not id then return nil, err end
  return wrap(id)
end

local function lines(path)
  local id, err = raw_open(path, "r")
  if not id then error(err, 2) end -- as io.lines: a file that cannot be read raises
  return lines_iterator(id, true) -- closed at the end of the file
end

return methods, open, lines
