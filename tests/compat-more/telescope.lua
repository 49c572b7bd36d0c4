-- telescope's (old busted's) names over minibusted's: before/after and the assert_* functions
before = before_each
after = after_each
local A = {
  blank = function(a) return a == nil or a == "" end,
  empty = function(a) return type(a) == "table" and next(a) == nil end,
  equal = function(a, b) return a == b end,
  error = function(f) return not pcall(f) end,
  ["false"] = function(a) return a == false end,
  ["true"] = function(a) return a == true end,
  ["nil"] = function(a) return a == nil end,
  greater_than = function(a, b) return a > b end, gt = function(a, b) return a > b end,
  gte = function(a, b) return a >= b end,
  less_than = function(a, b) return a < b end, lt = function(a, b) return a < b end,
  lte = function(a, b) return a <= b end,
  match = function(p, s) return type(s) == "string" and s:match(p) ~= nil end,
  type = function(a, t) return type(a) == t end,
}
for name, f in pairs(A) do
  _G["assert_" .. name] = function(...)
    if not f(...) then error("assert_" .. name .. " failed: " .. table.concat({tostring((...)), tostring(select(2, ...))}, " ~= "), 2) end
  end
  _G["assert_not_" .. name] = function(...)
    if f(...) then error("assert_not_" .. name .. " failed: " .. tostring((...)), 2) end
  end
end
