package lua

// __gc finalizers of userdata (gc.go) against lua5.1: the expected outputs
// are lua5.1's (`lua5.1 -e SRC`, whose state is closed at the end, so
// that the finalizers run at close print too).

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// runClosing runs src in a fresh state, closes it, and returns what it
// printed, close included, then the error it raised.
func runClosing(src string) string {
	L := NewState()
	var out bytes.Buffer
	L.SetGlobal("print", L.NewFunction(func(L *LState) int {
		out.WriteString(PrintLine(L))
		return 0
	}))
	if err := L.DoString(src); err != nil {
		out.WriteString("error: " + err.Error())
	}
	L.Close()
	return out.String()
}

// checkGC51 checks each case's output (close included) against the
// recorded one and, where lua5.1 is installed, that the record is still
// lua5.1's.
func checkGC51(t *testing.T, cases [][2]string) {
	t.Helper()
	_, err := exec.LookPath("lua5.1")
	for _, c := range cases {
		if got := strings.TrimSuffix(runClosing(c[0]), "\n"); got != c[1] {
			t.Errorf("%s\n got: %q\nwant: %q", c[0], got, c[1])
		}
		if err == nil {
			if got := strings.TrimSuffix(lua51Output(t, c[0]), "\n"); got != c[1] {
				t.Errorf("lua5.1 now gives %q, not %q, for\n%s", got, c[1], c[0])
			}
		}
	}
}

func TestGCFinalizersAtCollectAs51(t *testing.T) {
	checkGC51(t, [][2]string{
		// newest first; the finalizer gets the object (and may keep it);
		// a finalized userdata leaves a weak table's values at once, its
		// keys the collection after
		{`local order = {}
local u = newproxy(true)
local a = setmetatable({}, {__mode = "kv"})
a[u] = 0
for i = 1, 3 do local p = newproxy(u); a[p] = i; a[i] = p end
getmetatable(u).__gc = function(o) order[#order+1] = a[o]; _G.last = o end
u = nil
collectgarbage()
print(table.concat(order, " "), a[1], a[2], a[3], type(last), a[last])
last = nil
collectgarbage()
print(next(a))`, "3 2 1 0\tnil\tnil\tnil\tuserdata\t0\nnil"},
		// run at the first full collection that finds it unreachable, once
		{`local u = newproxy(true)
local keep = newproxy(u)
getmetatable(u).__gc = function(o) print("gc", o == keep) end
collectgarbage()
print("alive")
u = nil
collectgarbage()
print("after")
collectgarbage()
print("again")`, "alive\ngc\tfalse\nafter\nagain\ngc\ttrue"},
		// a userdata in a cycle through its metatable and finalizer
		{`local w = newproxy(true)
local m = getmetatable(w)
m.self = w
m.__gc = function(o) print("cycle", o == getmetatable(o).self) end
w, m = nil
collectgarbage()
print("end")`, "cycle\ttrue\nend"},
		// weak tables are cleared before the finalizers run
		{`local u = newproxy(true)
local m = getmetatable(u)
m.x = setmetatable({[{0}] = 1, [0] = {1}, keep = "s"}, {__mode = "kv"})
m.__gc = function(o) local n = 0 for k in pairs(getmetatable(o).x) do n = n + 1 end print("weak entries", n) end
u, m = nil
collectgarbage()
print("end")`, "weak entries\t1\nend"},
		// no __gc when it died: never finalized, even given one later
		{`local u = newproxy(true)
local mt = getmetatable(u)
u = nil
collectgarbage()
mt.__gc = function() print("never") end
collectgarbage()
print("end")`, "end"},
		// a __gc in a weak-valued metatable that the collection clears
		{`local u = newproxy(true)
setmetatable(getmetatable(u), {__mode = "v"})
getmetatable(u).__gc = function(o) print("cannot happen") end
collectgarbage()
print("end")`, "end"},
		// debug.setmetatable of a userdata with a __gc
		{`local d = newproxy()
debug.setmetatable(d, {__gc = function() print("debug.setmetatable gc") end})
d = nil
collectgarbage()
print("end")`, "debug.setmetatable gc\nend"},
	})
}

func TestGCFinalizerErrorsAs51(t *testing.T) {
	checkGC51(t, [][2]string{
		// the error leaves collectgarbage; the older one runs at the next
		{`local v = newproxy(true)
getmetatable(v).__gc = function() print("v finalized") end
local u = newproxy(true)
getmetatable(u).__gc = function() error("boom", 0) end
v, u = nil
print(pcall(collectgarbage))
print("between")
collectgarbage()
print("done")`, "false\tboom\nbetween\nv finalized\ndone"},
	})
}

func TestGCFinalizersAtCloseAs51(t *testing.T) {
	checkGC51(t, [][2]string{
		// all left run at close, newest first, errors ignored; those
		// made meanwhile do not run
		{`local keep = {}
for i = 1, 3 do
  local u = newproxy(true)
  getmetatable(u).__gc = function(o) print("close", i); newproxy(o) end
  keep[i] = u
end
local e = newproxy(true)
getmetatable(e).__gc = function() error("ignored") end
keep[4] = e
print("end")`, "end\nclose\t3\nclose\t2\nclose\t1"},
		// resurrected at close: finalized once
		{`local u = newproxy(true)
getmetatable(u).__gc = function(o) print("once"); _G.again = o end
u = nil
collectgarbage()
print("end")`, "once\nend"},
	})
}

// Without collectgarbage, making many finalizable userdata walks now and
// then (autoCollect): the unreachable ones are finalized or dropped, the
// set stays bounded; the reachable ones stay, never finalized.
func TestGCAutoCollectBoundsTheSet(t *testing.T) {
	L := NewState()
	defer L.Close()
	err := L.DoString(`
n, kept = 0, {}
local u = newproxy(true)
getmetatable(u).__gc = function() n = n + 1 end
for i = 1, 10000 do
  local p = newproxy(u)
  if i % 100 == 0 then kept[#kept + 1] = p end
  local q = newproxy(true) -- no __gc: dropped
end
for _, p in ipairs(kept) do if getmetatable(p) ~= getmetatable(u) then error("bad") end end`)
	if err != nil {
		t.Fatal(err)
	}
	n := int(L.GetGlobal("n").(LNumber))
	if n < 5000 || n > 10000-100 {
		t.Errorf("%d finalized of 10000, 100 of them reachable", n)
	}
	if got := len(L.G.gcs().uds) + len(L.G.gcs().pending); got > 4*gcAutoMin+200 {
		t.Errorf("%d userdata registered", got)
	}
}
