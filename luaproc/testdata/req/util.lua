-- a plain module: a table of functions; counts its loads in the
-- requiring process's globals
req_util_loads = (req_util_loads or 0) + 1
local name, path = ...
local M = {name = name, path = path}
function M.double(x) return 2 * x end
return M
