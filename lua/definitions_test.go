package lua

import (
	"strings"
	"testing"
)

// TestGlobalDefinitions: only a chunk of global function definitions
// whose functions capture nothing qualifies; a name defined twice ends
// with its last function.
func TestGlobalDefinitions(t *testing.T) {
	for _, tc := range []struct {
		src   string
		names string // "" and ok false: not definitions only
	}{
		{"function a() end\nfunction b(x) return x + y end", "a b"},
		{"function main() end", "main"},
		{"function a() return 1 end\nfunction b() end\nfunction a() return 2 end", "a b"},
		{"", ""}, // nothing to define: the chunk is run (it is cheap), as any other
		{"function a.b() end", ""},
		{"function m:x() end", ""},
		{"local function f() end\nfunction g() return f() end", ""},
		{"local n = 0\nfunction count() n = n + 1 return n end", ""},
		{"function a() end\nprint('loaded')", ""},
		{"function a() end\nreturn {}", ""},
		{"function a() end\nreturn", ""}, // an explicit return: two RETURNs
		{"x = function() end", "x"},
		{"x = 1", ""},
		{"function a() end\nb = a", ""},
	} {
		names, protos, ok := compileString(t, tc.src, "defs").GlobalDefinitions()
		if tc.src == "" {
			if ok && len(names) != 0 {
				t.Errorf("%q: %v", tc.src, names)
			}
			continue
		}
		if got := strings.Join(names, " "); ok != (tc.names != "") || got != tc.names {
			t.Errorf("%q: names %q, ok %v; want %q", tc.src, got, ok, tc.names)
		}
		if len(protos) != len(names) {
			t.Errorf("%q: %d protos for %d names", tc.src, len(protos), len(names))
		}
	}
	_, protos, _ := compileString(t, "function a() return 1 end\nfunction a() return 2 end", "defs").GlobalDefinitions()
	if len(protos) != 1 || protos[0].LineDefined != 2 {
		t.Errorf("a defined twice: want the second definition, got %v", protos)
	}
}

// TestFunctionTemplatesAreEachStatesOwn: a function template in the
// shared globals reads, in each state, as that state's own closure: one
// function per state, whose environment is the state's globals (what
// it reads and writes there stays there), never the template itself,
// whichever way it is read (a global, rawget, pairs, package.loaded._G).
func TestFunctionTemplatesAreEachStatesOwn(t *testing.T) {
	proto := compileString(t, "function get() return x end\nfunction set(v) x = v end", "defs")
	_, protos, ok := proto.GlobalDefinitions()
	if !ok {
		t.Fatal("not definitions only")
	}
	runtimeGlobals := newLTable(0, 0)
	runtimeGlobals.RawSetString("_G", runtimeGlobals)
	runtimeGlobals.Share()
	loaded := newLTable(0, 0)
	loaded.RawSetString("_G", runtimeGlobals)
	loaded.Share()
	globals := NewTable(0, 4)
	globals.RawSetString("_G", globals)
	globals.RawSetString("loaded", loaded)
	globals.RawSetString("get", NewFunctionTemplate(protos[0]))
	globals.RawSetString("set", NewFunctionTemplate(protos[1]))
	globals.ShareAs(runtimeGlobals)
	states := make([]*LState, 3) // the third reads nothing
	for i := range states {
		L := NewState(Options{SkipOpenLibs: true})
		OpenBase(L)
		g := newLTable(0, 0)
		L.G.Global.ForEach(func(k, v LValue) {
			if _, isFn := v.(*LFunction); isFn { // not _G: the view's base names it
				g.RawSet(k, v)
			}
		})
		L.G.Global, L.Env = g, g
		L.G.Views.Bind(globals)
		states[i] = L
		t.Cleanup(L.Close)
	}
	a, b := states[0], states[1]
	runOK(t, a, `
		local f = get
		assert(f == get and rawget(_G, "get") == f and _G.get == f)
		assert(getfenv(f) == _G and loaded._G == _G)
		set(1)
		assert(get() == 1 and x == 1)
		setfenv(get, {x = "other"})
		assert(get() == "other")
		get = nil
		assert(get == nil)`)
	runOK(t, b, `
		assert(x == nil and get() == nil, "b sees nothing of a's")
		local n = 0
		for k, v in pairs(_G) do
			if k == "get" or k == "set" then
				n = n + 1
				assert(v == _G[k] and getfenv(v) == _G)
			end
		end
		assert(n == 2)`)
	for _, L := range states {
		for _, name := range []string{"get", "set"} {
			if fn, _ := L.G.Global.RawGetStringShared(name).(*LFunction); fn != nil && fn.isTemplate() {
				t.Errorf("RawGetStringShared(%q) handed out the template", name)
			}
		}
	}
	if a.G.Global.RawGetString("set") == b.G.Global.RawGetString("set") {
		t.Error("two states share a closure")
	}
}
