-- fs.open's file handles and fs.lines, over the file.* commands (Go,
-- commands/fsfile.go): each method is a blocking call, and a handle's
-- lines come in batches of about 64 KB, so a generic for over a huge file
-- holds one batch at a time.
local raw_open, raw_read, raw_lines, raw_write, raw_seek, raw_close, wrap, id_of = ...
local error = error

local methods = {}

function methods.read(f, ...) return raw_read(id_of(f), ...) end

function methods.write(f, ...)
  local ok, err = raw_write(id_of(f), ...)
  if not ok then return nil, err end
  return f
end

function methods.seek(f, whence, offset) return raw_seek(id_of(f), whence, offset) end

function methods.close(f) return raw_close(id_of(f)) end

-- batches iterates over the lines of handle id; close: close it after
-- the last one (fs.lines).
local function batches(id, close)
  local batch, i = nil, 0
  return function()
    if batch == nil or i >= #batch then
      local err
      batch, err = raw_lines(id)
      i = 0
      if batch == nil then
        if err then error(err, 2) end
        if close then raw_close(id) end
        return nil
      end
    end
    i = i + 1
    return batch[i]
  end
end

function methods.lines(f) return batches(id_of(f), false) end

local function open(path, mode)
  local id, err = raw_open(path, mode)
  if not id then return nil, err end
  return wrap(id)
end

local function lines(path)
  local id, err = raw_open(path, "r")
  if not id then error(err, 2) end -- as io.lines: a file that cannot be read raises
  wrap(id) -- the process's end closes it if the loop stops early
  return batches(id, true)
end

return methods, open, lines
