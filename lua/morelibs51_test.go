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

// A chunk load or loadstring names (no "=" or "@") is shown in positions
// and tracebacks as 5.1's luaO_chunkid shows it, [string "name"] (its
// first line, cut at 60 bytes); load's default name is "=(load)" and
// loadstring's the text itself. luacheck strips
// '[string "chunk"]:' off its config errors; it got "chunk:1:".
func TestLoadedChunkNamesAs51(t *testing.T) {
	check51(t, [][2]string{
		{`print(pcall(loadstring("foo()", "chunk")))`, "false\t[string \"chunk\"]:1: attempt to call global 'foo' (a nil value)"},
		{`print(pcall(loadstring("local function f() error('in f') end f()", "nm")))`, "false\t[string \"nm\"]:1: in f"},
		{`print(pcall(loadstring("local function f() error('in f', 2) end f()", "nm")))`, "false\t[string \"nm\"]:1: in f"},
		{`print(pcall(loadstring("\n\nfoo()", "a very long chunk name that goes on and on and on and on and on and on and on")))`,
			"false\t[string \"a very long chunk name that goes on and on ...\"]:3: attempt to call global 'foo' (a nil value)"},
		{`print(pcall(loadstring("foo()", "line1\nline2")))`, "false\t[string \"line1...\"]:1: attempt to call global 'foo' (a nil value)"},
		{`print(pcall(loadstring("foo()", "")))`, "false\t[string \"\"]:1: attempt to call global 'foo' (a nil value)"},
		{`print(pcall(loadstring("foo()", "=nm")))`, "false\tnm:1: attempt to call global 'foo' (a nil value)"},
		{`print(pcall(loadstring("foo()", "@nm.lua")))`, "false\tnm.lua:1: attempt to call global 'foo' (a nil value)"},
		{`print(pcall(loadstring("foo()")))`, "false\t[string \"foo()\"]:1: attempt to call global 'foo' (a nil value)"},
		{`local function rd(s) local done return function() if not done then done = true return s end end end
print(pcall(load(rd("foo()"))))
print(pcall(load(rd("foo()"), "nm")))`,
			"false\t(load):1: attempt to call global 'foo' (a nil value)\n" +
				"false\t[string \"nm\"]:1: attempt to call global 'foo' (a nil value)"},
	})
}
