-- fs.open's file handles and fs.lines, over the file.* commands (Go,
-- commands/fsfile.go): each method is a blocking call; a lines iterator
-- (Go, luaproc/fsfile.go) reads batches of about 64 KB, so a generic for
-- over a huge file holds one batch at a time.
local raw_open, raw_read, raw_write, raw_seek, raw_close, wrap, id_of, lines_iterator, give_back = ...
local error = error

local methods = {}

-- at reads the handle's id, after seeking back over what its lines
-- iterator read ahead and did not hand out: the next read, write or seek
-- starts where the loop stopped, as with Lua's own files.
local function at(f)
  local id = id_of(f)
  local back = give_back(id)
  if back > 0 then raw_seek(id, "cur", -back) end
  return id
end

function methods.read(f, ...) return raw_read(at(f), ...) end

function methods.write(f, ...)
  local ok, err = raw_write(at(f), ...)
  if not ok then return nil, err end
  return f
end

function methods.seek(f, whence, offset) return raw_seek(at(f), whence, offset) end

function methods.close(f) return raw_close(id_of(f)) end

function methods.lines(f) return lines_iterator(id_of(f), false) end

local function open(path, mode)
  local id, err = raw_open(path, mode)
  if not id then return nil, err end
  return wrap(id)
end

local function lines(path)
  local id, err = raw_open(path, "r")
  if not id then error(err, 2) end -- as io.lines: a file that cannot be read raises
  wrap(id) -- the process's end closes it if the loop stops early
  return lines_iterator(id, true) -- closed at the end of the file
end

return methods, open, lines
