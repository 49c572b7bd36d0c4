package lua

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// lineHookDriver runs the chunk on its standard input under lua5.1 with a
// line hook, writing the lines of the events in the chunk's functions.
const lineHookDriver = `
local src = io.read("*a")
local f = assert(loadstring(src, "=t"))
local out = {}
debug.sethook(function(e, l) if debug.getinfo(2, "S").source == "=t" then out[#out+1] = l end end, "l")
pcall(f)
debug.sethook()
io.write(table.concat(out, " "))
`

// lineEvents runs src with a line hook and returns the lines of its
// events, space separated (an error ends the run, as pcall would).
func lineEvents(t *testing.T, src string) string {
	t.Helper()
	L := NewState()
	defer L.Close()
	fn, err := L.Load(strings.NewReader(src), "=t")
	if err != nil {
		t.Fatalf("%v", err)
	}
	var lines []string
	L.Push(fn)
	L.SetHook(&Hook{Mask: HookLine, Func: func(L *LState, ev HookEvent, line int) {
		lines = append(lines, strconv.Itoa(line))
	}})
	L.PCall(0, 0, nil)
	L.SetHook(nil)
	return strings.Join(lines, " ")
}

// lua51LineEvents is lineEvents under lua5.1, or "" with ok false when it
// is not installed.
func lua51LineEvents(t *testing.T, src string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("lua5.1")
	if err != nil {
		return "", false
	}
	cmd := exec.Command(path, "-e", lineHookDriver)
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lua5.1: %v\n%s", err, out)
	}
	return string(out), true
}

// lineCases are chunks and the lines of their line events under lua5.1.
var lineCases = []struct{ name, src, want string }{
	{"if-else", "if\nmath.sin(1)\nthen\n  a=1\nelse\n  a=2\nend\n", "2 4 7"},
	{"if-nil-else", "--\nif nil then\n  a=1\nelse\n  a=2\nend\n", "2 5 6"},
	{"repeat", "a=1\nrepeat\n  a=a+1\nuntil a==3\n", "1 3 4 3 4"},
	{"do-return", " do\n  return\nend\n", "2"},
	{"local-while", "local a\na=1\nwhile a<=3 do\n  a=a+1\nend\n", "2 3 4 3 4 3 4 3 5"},
	{"while-break", "while math.sin(1) do\n  if math.sin(1)\n  then\n    break\n  end\nend\na=1", "1 2 4 7"},
	{"numeric-for", "for i=1,3 do\n  a=i\nend\n", "1 2 1 2 1 2 1 3"},
	{"pairs-for", "for i,v in pairs{'a','b'} do\n  a=i..v\nend\n", "1 2 1 2 1 3"},
	{"one-line-for", "for i=1,4 do a=1 end", "1 1 1 1 1"},
	{"local-function-closures", "local function f(a)\n  local b\n  local c\n  return a\nend\nf(1)\nlocal g = function()\n  return 2\nend\ng()\n", "5 6 4 9 10 8"},
	{"custom-iterator", "local function it(s, c)\n  if c < 3 then return c + 1 end\nend\nfor i in it, nil, 0 do\n  local x = i\nend\nfor i in it, nil, 0 do end\nx = 1\n", "3 4 2 5 4 2 5 4 2 5 4 2 3 7 2 7 2 7 2 7 2 3 8"},
	{"loops-closing-upvalues", "local fs = {}\nfor i = 1, 2 do\n  local j = i\n  fs[i] = function() return j end\nend\ndo\n  local z = 1\n  fs[3] = function() return z end\nend\nlocal n = 0\nrepeat\n  local k = n\n  fs[4] = function() return k end\n  n = n + 1\nuntil n >= 2\nwhile n < 4 do\n  local k = n\n  fs[5] = function() return k end\n  n = n + 1\nend\n", "1 2 3 4 2 3 4 2 7 8 10 12 13 14 15 12 13 14 15 16 17 18 19 16 17 18 19 16 20"},
	{"elseif-chains", "local a = 1\nif a == 2 then\n  a = 3\nelseif a == 1 then\n  a = 4\nelse\n  a = 5\nend\nif a then else a = 1 end\nif a then a = 2\nelse a = 1 end\n", "1 2 4 5 9 10 11"},
	{"varargs-constructor", "local function f(...)\n  local a, b = ...\n  return a\nend\nf(1, 2)\nlocal t = { 1, 2,\n  3, f(4) }\n", "4 5 2 3 6 7 2 3"},
	{"loops", "local i = 0\nwhile true do\n  i = i + 1\n  if i > 2 then break end\nend\nrepeat\n  i = i - 1\nuntil i == 0\nfor k = 3, 1, -1 do\n  i = i + k\nend\n", "1 3 4 3 4 3 4 7 8 7 8 7 8 9 10 9 10 9 10 9 11"},
	{"nil-locals-joined", "x = 1\nlocal a\nlocal b\nx = 2\nlocal c, d\nlocal e = nil\nx = 3\n", "1 2 4 5 7"},
	{"multi-line-expressions", "local a, b =\n  1,\n  2\nlocal c = a +\n  b\na, b = b,\n  a\nreturn a,\n  b\n", "2 3 5 6 7 8 9"},
	{"long-string", "x = 1\nlocal a\nlocal b\nx = 2\nlocal c, d\nlocal e = nil\nx = 3\nlocal s = [[\na\nb]]\nx = s .. \"y\"\n", "1 2 4 5 7 10 11"},
	{"nil-locals-at-start", "local a\nlocal b = nil\nlocal c\nx = a\n", "4"},
}

// TestLineEventsAs51: a line hook sees the lines Lua 5.1 gives the
// instructions (luarun).
func TestLineEventsAs51(t *testing.T) {
	for _, c := range lineCases {
		t.Run(c.name, func(t *testing.T) {
			if got := lineEvents(t, c.src); got != c.want {
				t.Errorf("%q: line events %s, want (lua5.1) %s", c.src, got, c.want)
			}
			if ref, ok := lua51LineEvents(t, c.src); ok && ref != c.want {
				t.Errorf("%q: the expectation %s differs from lua5.1's %s", c.src, c.want, ref)
			}
		})
	}
}

// TestDroppedLoadNilLeavesNil: the LOADNIL that AddLoadNil leaves out at
// a function's start (as 5.1's luaK_nil) reads nil: frames start with
// nil registers, the main chunk has no arg table, and the frame covers
// the register (luarun).
func TestDroppedLoadNilLeavesNil(t *testing.T) {
	checkLua51(t, `
local a
local t = {}
local b, c
t.x = c
print(a, b, c, t.x)
local function v(...) local x, y; return x, y end
print(v(1, 2, 3))
local function w(p, ...) local x = nil; local y; return p, x, y end
local function tail() return w(1, 2, 3, 4) end
print(tail())
local function nonvararg(p) local q; return p, q end
print(nonvararg(1, 2, 3))
local co = coroutine.wrap(function(...) local z; return z end)
print(co(5, 6))
`, "nil\tnil\tnil\tnil\nnil\tnil\n1\tnil\tnil\n1\tnil\nnil\n")
}
