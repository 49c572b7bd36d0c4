-- Assertions shared by the Lua test suites (require("lib.check")). A
-- failure's traceback names the line of the suite that failed.
local M = {}

function M.eq(got, want, what)
  if got ~= want then
    error(string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)), 2)
  end
end

function M.has(s, sub)
  if type(s) ~= "string" or not s:find(sub, 1, true) then
    error(string.format("%q does not contain %q", tostring(s), sub), 2)
  end
end

return M
