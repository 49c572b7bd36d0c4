package luaproc

// Lua 5.1 as programs expect it: require around luarun's built-ins,
// module(), the debug library, xpcall's handler, a first line of '#'.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestRequireFileWinsOverBuiltin: a program's own json.lua is what
// require("json") answers; luarun's json stays the global and
// require("luarun.json"); every built-in answers as "luarun.<name>".
func TestRequireFileWinsOverBuiltin(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"json.lua": `return {mine = true}`,
		"main.lua": `
function main()
  local before = package.loaded.json
  local mine = require("json")
  assert(require("json") == mine and package.loaded.json == mine)
  assert(require("luarun.json") == json and json.encode ~= nil)
  for _, name in ipairs{"process", "time", "log", "json", "debug", "string", "table", "math", "os", "coroutine", "supervisor"} do
    assert(require("luarun." .. name) == _G[name], name)
  end
  assert(require("time") == time, "no time.lua: the built-in")
  return before == nil, mine.mine == true, package.loaded["luarun.json"] == json
end`,
	})
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, true, true}, res)
}

// TestRequireReadsAChangedFileAgain: after package.loaded[name] = nil,
// require compiles the file again if it changed since.
func TestRequireReadsAChangedFileAgain(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mod.lua": `return "first"`,
		"main.lua": `
function main(path)
  local a = require("mod")
  package.loaded.mod = nil
  local same = require("mod")
  local f = assert(io.open(path, "w"))
  f:write('return "second, longer"')
  f:close()
  package.loaded.mod = nil
  return a, same, require("mod")
end`,
	})
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"io"}})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main", filepath.Join(dir, "mod.lua"))
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"first", "first", "second, longer"}, res)
}

// TestSandboxSkipsPathOutside: without fs, a package.path template
// outside the program's directory is skipped and listed as not allowed;
// later requires of modules inside still load.
func TestSandboxSkipsPathOutside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"other.lua": `return "outside"`})
	writeFiles(t, dir, map[string]string{
		"lib/inside.lua": `return "inside"`,
		"main.lua": `
function main(outside)
  package.path = outside .. "/?.lua;" .. package.path .. ";./lib/?.lua"
  local ok, err = pcall(require, "other")
  return require("lib.inside"), ok, err
end`,
	})
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main", outside)
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Equal(t, "inside", res[0])
	assert.Equal(t, false, res[1])
	assert.Contains(t, res[2], "module 'other' not found:\n\tno field package.preload['other']\n\tnot allowed: "+
		outside+"/other.lua: it is outside the program's directory "+dir)
	assert.Contains(t, res[2], "\n\tno file '"+dir+"/other.lua'")
	assert.NotContains(t, res[2], "\"outside\"")
}

// TestModuleSeeall: module(name, package.seeall) as in Lua 5.1: the
// module is package.loaded[name] and the global, has _NAME, _M and
// _PACKAGE, is the environment of the chunk, and sees the globals; it
// cannot change the environment of a luarun built-in.
func TestModuleSeeall(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a/b.lua":   "module(..., package.seeall)\nlocal x = 41\nfunction get() return x + 1 end\nfunction names() return _NAME, _PACKAGE, _M == package.loaded['a.b'] end\n",
		"plain.lua": "module('plain')\nfunction f() return print end\n",
		"main.lua": `
function main()
  local m = require("a.b")
  local n, p, self = m.names()
  local ok, err = pcall(module, "x")
  local plain = require("plain")
  return m.get(), a.b == m, package.loaded["a.b"] == m, getfenv(m.get) == m, n, p, self,
    plain.f() == nil, plain == _G.plain, ok, err, type(rawget(_G, "x")), pcall ~= nil
end`,
	})
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(42), true, true, true, "a.b", "a.", true,
		true, true, false, "'module' not called from a Lua function", "table", true}, res)
}

// TestDebugLibraryAsLua51: every function of 5.1's debug library is
// there; getmetatable and setmetatable ignore __metatable; a type's
// metatable (strings' included) is the process's alone; luarun's shared
// metatables are neither handed out nor replaced.
func TestDebugLibraryAsLua51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "debug51.lua", `
local function other()
  -- another process: none of main's type metatables
  local smt = debug.getmetatable("")
  return debug.getmetatable(5) == nil and smt.__add == nil and type(("x"):upper()) == "string"
end
function child(parent) process.send(parent, other()) end
function main()
  local names = {"debug", "getfenv", "gethook", "getinfo", "getlocal", "getmetatable", "getregistry", "getupvalue",
    "setfenv", "sethook", "setlocal", "setmetatable", "setupvalue", "traceback"}
  local missing = {}
  for _, n in ipairs(names) do if type(debug[n]) ~= "function" then missing[#missing + 1] = n end end
  local mt = {__metatable = "locked", x = 1}
  local t = setmetatable({}, mt)
  local got = debug.getmetatable(t) == mt
  debug.setmetatable(t, nil)
  local cleared = getmetatable(t) == nil
  debug.setmetatable(5, {__index = function(n, k) return k .. n end})
  local num = (5).x
  local smt = debug.getmetatable("")
  local strIndex = smt.__index == string and debug.getmetatable("") == smt
  smt.__add = function(a, b) return a .. "+" .. b end
  local sum = "a" + "b"
  local shared = debug.getmetatable(string) -- none: the module is an ordinary table, as in 5.1
  local okNull, errNull = pcall(debug.setmetatable, json.null, {})
  local reg = debug.getregistry()
  local h0, m0, c0 = debug.gethook()
  local hook = function() end
  debug.sethook(hook, "c", 3)
  local h1, m1, c1 = debug.gethook()
  local x = 1
  local lname = debug.setlocal(1, 1, "set") -- local 1 of main: names
  process.spawn("child", process.self())
  local otherOK = process.receive()
  return table.concat(missing, ","), got, cleared, num, strIndex, sum, shared, okNull, errNull ~= nil,
    reg == debug.getregistry(), h0 == nil and m0 == "" and c0 == 0, h1 == hook and m1 == "c" and c1 == 3,
    lname, names, debug.traceback(nil) == nil, otherOK
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"", true, true, "x5", true, "a+b", nil, false, true,
		true, true, true, "names", "set", true, true}, res)
}

// TestXpcallHandlerRunsBeforeUnwinding: the handler of xpcall runs where
// the error was raised, so a traceback it takes shows the frames that
// failed (with any handler, not just debug.traceback); xpcall keeps
// passing yields through, counting results and answering "error in
// error handling".
func TestXpcallHandlerRunsBeforeUnwinding(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "xp.lua", `
local function inner() local x = nil; x() end
local function outer() inner() end
function main()
  local _, tb = xpcall(function() local x = nil; x() end, debug.traceback)
  local _, tb2 = xpcall(outer, function(m) return "H " .. debug.traceback(m, 2) end)
  local _, where = xpcall(function() time.sleep(0.001); error({code = 7}) end,
    function(e) return e.code .. " " .. debug.getinfo(3, "Sl").currentline end)
  local _, eh = xpcall(error, function() error("again") end)
  local _, notfn = xpcall(error, 42)
  local n = select("#", xpcall(function() return nil end, print))
  local _, nested = xpcall(error, function(m)
    local ok, v = xpcall(function() error("in handler", 0) end, function(e) return "inner " .. e end)
    return m .. "/" .. v
  end, "outer", 0)
  return tb, tb2, where, eh, notfn, n, nested
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 7)
	assert.Regexp(t, `^xp.lua:5: .*\nstack traceback:\n\txp.lua:5: in function <xp.lua:5>\n`, res[0])
	assert.Regexp(t, `^H xp.lua:2: .*\nstack traceback:\n\txp.lua:2: in function 'inner'\n\txp.lua:3: in function <xp.lua:3>\n`, res[1])
	assert.Equal(t, "7 7", res[2])
	assert.Equal(t, "error in error handling", res[3])
	assert.Equal(t, "error in error handling", res[4])
	assert.Equal(t, int64(2), res[5])
	assert.Equal(t, "outer/inner in handler", res[6])
}

// TestHashFirstLineSkipped: a first line starting with '#' is skipped in
// a script, a module, and what dofile and loadfile load, as lua does,
// and line numbers stay the file's.
func TestHashFirstLineSkipped(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mod.lua":  "# a comment line, not a shebang\nreturn debug.getinfo(1, 'l').currentline\n",
		"only.lua": "#!/usr/bin/env lua",
		"main.lua": "#!/usr/bin/env luarun\n" + `function main(dir)
  return debug.getinfo(1, "l").currentline, require("mod"), dofile(dir .. "/mod.lua"),
    loadfile(dir .. "/mod.lua")(), select("#", dofile(dir .. "/only.lua"))
end`,
	})
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main", dir)
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(3), int64(2), int64(2), int64(2), int64(0)}, res)
}

// TestGetinfoSourcesAs51: debug.getinfo's source, short_src and
// activelines are Lua 5.1's (luaO_chunkid; the lines that have code).
func TestGetinfoSourcesAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "src.lua", `
local a = "function f () end"
local function short(name) loadstring(a, name)() return debug.getinfo(f).short_src end
local lines = debug.getinfo(function()
  local x = 1
  return x
end, "L").activelines
return short(), short(""), short("@xuxu"), short("=xuxu"), short("name"),
  debug.getinfo(1, "S").source, lines[5] == true and lines[6] == true and lines[4] == nil`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{`[string "function f () end"]`, `[string ""]`, "xuxu", "xuxu",
		`[string "name"]`, "@src.lua", true}, res)
}

// tb51 is a traceback as Lua 5.1's db_errorfb writes it: the lines given,
// with each {line, n} pair repeated n times.
func tb51(parts ...any) string {
	var b strings.Builder
	b.WriteString("stack traceback:")
	for i := 0; i < len(parts); i++ {
		line, n := parts[i].(string), 1
		if i+1 < len(parts) {
			if k, ok := parts[i+1].(int); ok {
				n = k
				i++
			}
		}
		for ; n > 0; n-- {
			b.WriteString("\n\t" + line)
		}
	}
	return b.String()
}

// TestTracebackAs51: debug.traceback and the traceback of an uncaught
// error cut a deep stack as Lua 5.1's db_errorfb does (the levels up to
// 12, "...", the last 10; an uncaught error's traceback starts at level
// 2, as lua.c's), write a Go function as 5.1 writes a C function ("[C]:
// in function 'error'", "[C]: ?"), end a main chunk's stack with the
// host's "[C]: ?", and name a chunk called by a name by it. An xpcall
// handler runs where a stack overflow was raised (it had no call frame
// left, and xpcall answered "error in error handling"). Each expected
// string is what lua5.1 prints for the same script.
func TestTracebackAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "tb.lua", `
local function g(n) if n == 0 then return debug.traceback("x") end local t = g(n-1) return t end
local deep, short = g(100), g(3)
local function y() y() end
local _, so = xpcall(function() y() end, debug.traceback)
local f = loadstring("return debug.traceback('named')")
return deep, short, so, f()
`, "")
	require.NoError(t, err)
	require.Len(t, res, 4)
	g, main := "tb.lua:2: in function 'g'", "tb.lua:3: in main chunk"
	assert.Equal(t, "x\n"+tb51(g, 11, "...", g, 8, main, "[C]: ?"), res[0])
	assert.Equal(t, "x\n"+tb51(g, 4, main, "[C]: ?"), res[1])
	y := "tb.lua:4: in function 'y'"
	assert.Equal(t, "tb.lua:4: stack overflow\n"+tb51(y, 11, "...", y, 6,
		"tb.lua:5: in function <tb.lua:5>", "[C]: in function 'xpcall'", "tb.lua:5: in main chunk", "[C]: ?"), res[2])
	assert.Equal(t, "named\n"+tb51(`[string "return debug.traceback('named')"]:1: in function 'f'`,
		"tb.lua:7: in main chunk", "[C]: ?"), res[3])

	_, err = runLua(t, rt, "un.lua", `
local function f(n) if n == 0 then error("boom") end local v = f(n-1) return v end
f(50)
`, "")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "un.lua:2: boom", se.Message)
	f := "un.lua:2: in function 'f'"
	assert.Equal(t, tb51("[C]: in function 'error'", f, 9, "...", f, 8, "un.lua:3: in main chunk", "[C]: ?"), se.Traceback)
}

// TestGetinfoFuncOfGoFunction: debug.getinfo(level, "f") of a Go
// function's frame is the function, as 5.1 gives a C function's (a call
// hook keyed a table by it: db.lua); luarun's own Lua built-ins stay
// hidden.
func TestGetinfoFuncOfGoFunction(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "f.lua", `
local seen = {}
debug.sethook(function(e) local f = debug.getinfo(2, "f").func; if f then seen[f] = true end end, "c")
math.abs(1)
debug.sethook()
return seen[math.abs] == true`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true}, res)
}

// TestGetlocalTemporariesAs51: debug.getlocal answers 5.1's
// "(*temporary)" slots (its own arguments at level 0, a caller's pending
// values) and nil, not nothing, past them; setlocal writes a temporary
// (db.lua). The expected values are lua5.1's.
func TestGetlocalTemporariesAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "tmp.lua", `
local n1, v1 = debug.getlocal(0, 1)
local n2, v2 = debug.getlocal(0, 2)
local none3, none0 = select("#", debug.getlocal(0, 3)), debug.getlocal(0, 0)
local seen
function f()
  seen = select(2, debug.getlocal(2, 3))
  debug.setlocal(2, 3, 10)
  return 20
end
function g(a, b) return (a + 1) + f() end
return n1, v1, n2, v2, none3, none0, g(0, 0), seen`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"(*temporary)", int64(0), "(*temporary)", int64(2), int64(1), nil, int64(30), int64(1)}, res)
}

// TestGetlocalAtFirstInstructionAs51: a line hook at a function's first
// instruction sees its parameters and vararg arg table as locals (the
// lookup took a local as active only after its first instruction; 5.1's
// luaF_getlocalname takes startpc <= pc). lua5.1 prints self, a, b, arg.
func TestGetlocalAtFirstInstructionAs51(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "first.lua", `
local names = {}
local a = {}
function a:f(a, b, ...) local c = 13 end
debug.sethook(function()
  debug.sethook(function()
    debug.sethook(nil)
    for i = 1, 4 do names[i] = (debug.getlocal(2, i)) end
  end, "l")
end, "c")
a:f(1, 2, 3)
return table.concat(names, ",")`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"self,a,b,arg"}, res)
}

// TestDumpRefusesBuiltins: string.dump refuses luarun's own Lua functions
// (pcall, require, what coroutine.wrap makes), which scripts see as Go
// functions, as 5.1 refuses a C function; a script's own dumps and loads.
func TestDumpRefusesBuiltins(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "dump.lua", `
local out = {}
for _, f in ipairs({pcall, require, coroutine.wrap(function() end), print}) do
  out[#out + 1] = select(2, pcall(string.dump, f))
end
out[#out + 1] = loadstring(string.dump(function(a) return a * 2 end))(21)
return table.concat(out, "|")`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"unable to dump given function|unable to dump given function|" +
		"unable to dump given function|unable to dump given function|42"}, res)
}

// TestTailCallLevelsAs51: the calls a function replaced by tail calls are
// levels of the stack, as Lua 5.1's lost tail calls: getinfo describes
// them ("tail", "=(tail call)", no func), getlocal has nil there,
// getfenv, setfenv and error count them, tracebacks write one "(tail
// call): ?" each (a run of 100000 cut as db_errorfb cuts it), a script's
// tail call of pcall keeps the caller's level, and the "tail return"
// hook events come after the return with the count dropping.
// testdata/lua51/tail51.want.txt is lua5.1's output, checked again here when
// lua5.1 is installed.
func TestTailCallLevelsAs51(t *testing.T) {
	sameOutputAs51(t, "tail51.lua")
}

// sameOutputAs51 runs testdata/lua51/name as a main chunk and checks that
// it prints what the file's .want.txt holds (what lua5.1 printed for it),
// and that lua5.1 still does when it is installed.
func sameOutputAs51(t *testing.T, name string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata/lua51", name))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("testdata/lua51", strings.TrimSuffix(name, ".lua")+".want.txt"))
	require.NoError(t, err)
	rt, stdout, _ := newTestRuntime(t, Options{})
	_, err = runLua(t, rt, name, string(src), "")
	require.NoError(t, err)
	assert.Equal(t, string(want), stdout.String())

	lua51, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("lua5.1 is not installed: no comparison")
	}
	cmd := exec.Command(lua51, name)
	cmd.Dir = "testdata/lua51"
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, string(want), string(out), "lua5.1's output")
}

// TestCoroutineLevelsAs51: debug.traceback, getinfo, getlocal and
// setlocal of a coroutine that is not running count its levels as Lua
// 5.1 does: one suspended in a yield has that C function as level 0 (the
// interpreter drops a yielding Go function's frame), one an error ended
// keeps the frames it failed in with their locals (they were popped and
// cleared), a coroutine's base has nothing below it (luarun's body
// wrapper is not a level), and tail calls count there too.
// testdata/lua51/coro51.want.txt is lua5.1's output, checked again here
// when lua5.1 is installed.
func TestCoroutineLevelsAs51(t *testing.T) {
	sameOutputAs51(t, "coro51.lua")
}
