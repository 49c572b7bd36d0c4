-- mainboot: the root task's function of a program's main process when the
-- luarun command runs code before the script (LUA_INIT, -e, -l; see
-- Runtime.StartMain). It arms the traceback hook, runs those chunks in
-- order with no arguments, then hands over to the prelude's boot, which
-- runs the script's chunk and its entry point.
--
-- Arguments: arm, the chunks (a list), boot, the script's chunk, the entry
-- point, then the process's arguments.
local arm, before, boot, chunk, entry = ...
local select = select
local function same(...) return ... end
arm()
for i = 1, #before do
  before[i]()
end
return same(boot(chunk, entry, select(6, ...))) -- not a tail call: boot keeps a caller
