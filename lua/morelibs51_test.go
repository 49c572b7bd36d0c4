// Cases found running real pure-Lua libraries' tests under lua5.1 and luarun
// (Moses, middleclass, ...): each expected output is lua5.1's.
package lua

import "testing"

// A tail call reuses the caller's frame: the callee's registers past its
// arguments must be nil, since the compiler leaves out a LOADNIL at pc 0
// (lcode.c's luaK_nil). The frame copy dropped the callee's last register,
// which then read as Go nil (Moses' isNil: 'return obj==nil' panicked).
func TestTailCallFrameKeepsLastRegister(t *testing.T) {
	check51(t, [][2]string{
		{`local function f(o) return o == nil end local function g() return f(nil) end print(g())`, "true"},
		{`local function f(o) if o == nil then return 1 end end local function g() return f(nil) end print(g())`, "1"},
		{`local function f(a, b) return a == nil, b == nil end local function g(x) return f(x) end print(g(1))`, "false\ttrue"},
		{`local function f(o, ...) return o == nil, select('#', ...) end local function g() return f(nil, 1, 2) end print(g())`, "true\t2"},
		{`local M = {} function M.isNil(obj) return obj == nil end print(pcall(function() return M.isNil() end))`, "true\ttrue"},
		{`local t = setmetatable({}, {__call = function(self, o) return o == nil end}) local function g() return t(nil) end print(g())`, "true"},
	})
}
