package lua

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// sharedLibs returns shared globals holding a shared "lib" table, and
// the two states' _G bound as views of them.
func sharedLibs(t *testing.T) (*LTable, *LState, *LState) {
	t.Helper()
	lib := newLTable(0, 0)
	lib.RawSetString("f", LString("lib.f"))
	lib.RawSetString("g", LString("lib.g"))
	strMT := newLTable(0, 0)
	strMT.RawSetString("__index", lib)
	globals := newLTable(0, 0)
	globals.RawSetString("lib", lib)
	globals.RawSetString("x", LNumber(1))
	globals.RawSetString("_G", globals)
	for _, tb := range []*LTable{lib, strMT, globals} {
		tb.Share()
	}
	states := make([]*LState, 2)
	for i := range states {
		L := NewState(Options{SkipOpenLibs: true})
		OpenBase(L)
		OpenString(L)
		g := newLTable(0, 0)
		L.G.Global.ForEach(func(k, v LValue) {
			if _, isFn := v.(*LFunction); isFn {
				g.RawSet(k, v)
			}
		})
		L.G.Global, L.Env = g, g
		L.G.Views.Bind(globals)
		L.SetMetatable(LString(""), strMT)
		states[i] = L
		t.Cleanup(L.Close)
	}
	return globals, states[0], states[1]
}

func runOK(t *testing.T, L *LState, code string) {
	t.Helper()
	if err := L.DoString(code); err != nil {
		t.Fatalf("%s: %v", code, err)
	}
}

func TestViewsReadThroughAndStayPrivate(t *testing.T) {
	globals, a, b := sharedLibs(t)
	runOK(t, a, `
		assert(rawget(_G, "x") == 1 and _G._G == _G)
		assert(lib.f == "lib.f" and rawget(lib, "g") == "lib.g")
		lib.f = "mine"; lib.h = 1; x = 2; lib.g = nil
		local n = 0
		for k, v in pairs(lib) do n = n + 1 end
		assert(n == 2, n)
		assert(getmetatable("").__index == lib)
		assert(("s").h == 1)
		setmetatable(_G, {__index = function(_, k) return "strict:" .. k end})
		assert(undefined == "strict:undefined")
	`)
	runOK(t, b, `
		assert(lib.f == "lib.f" and lib.g == "lib.g" and lib.h == nil and x == 1)
		assert(getmetatable(_G) == nil and undefined == nil)
		local n = 0
		for k in pairs(lib) do n = n + 1 end
		assert(n == 2, n)
		assert(("s").f == "lib.f" and ("s").h == nil)
	`)
	if v := globals.RawGetString("x"); v != LNumber(1) {
		t.Fatalf("shared x = %v", v)
	}
}

func TestViewsMapSharedTablesOnce(t *testing.T) {
	_, a, _ := sharedLibs(t)
	runOK(t, a, `
		local l = lib
		lib = nil                 -- removes the own copy: _G materializes
		assert(rawget(_G, "lib") == nil and l.f == "lib.f")
		assert(getmetatable("").__index == l, "one view of lib per state")
		for k, v in pairs(_G) do assert(type(v) ~= "table" or v == _G or v == l) end
	`)
}

// TestViewsReadBaseKeysOfEveryLength reads the base's string keys
// through views, short (hashed) and long (scanned in a small table), as
// constants (hashed by the compiler) and computed, before and after the
// view has entries of its own: a miss searches the base with the hash
// the view was searched with.
func TestViewsReadBaseKeysOfEveryLength(t *testing.T) {
	lib := newLTable(0, 0)
	for n := 1; n <= 40; n++ {
		lib.RawSetString(strings.Repeat("k", n), LNumber(n))
	}
	globals := newLTable(0, 0)
	globals.RawSetString("lib", lib)
	globals.RawSetString("a_rather_long_global_name", LNumber(7))
	lib.Share()
	globals.Share()
	L := NewState(Options{SkipOpenLibs: true})
	defer L.Close()
	OpenBase(L)
	OpenString(L)
	g := newLTable(0, 0)
	L.G.Global.ForEach(func(k, v LValue) { g.RawSet(k, v) })
	L.G.Global, L.Env = g, g
	L.G.Views.Bind(globals)
	runOK(t, L, `
		assert(a_rather_long_global_name == 7)
		assert(lib.k == 1 and lib.kkkkkkkk == 8 and lib.kkkkkkkkk == 9)
		for round = 1, 2 do
			for n = 1, 40 do
				local k = string.rep("k", n)
				assert(lib[k] == n and rawget(lib, k) == n, k)
			end
			assert(lib.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk == 40)
			lib.own = true -- the view's own part, then read again
		end
		lib.kk = "mine"
		assert(lib.kk == "mine" and lib.kkk == 3 and lib.missing == nil)
	`)
}

func TestSharedTableRefusesWrites(t *testing.T) {
	tb := newLTable(0, 0)
	tb.RawSetString("a", LTrue)
	tb.Share()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "shared table") {
			t.Fatalf("recovered %v", r)
		}
	}()
	tb.RawSetString("a", LFalse)
}

// TestMetamethodCallInFirstResume: a coroutine resumed from Go on a state
// that never called anything (luarun's process states) calls a Lua
// __index from GETTABLE; the call returns its value to the instruction
// (it ran the rest of the coroutine instead, leaving the register as it
// was).
func TestMetamethodCallInFirstResume(t *testing.T) {
	L := NewState(Options{SkipOpenLibs: true})
	defer L.Close()
	co, _ := L.NewThread()
	fn, err := L.LoadString(`
		local x = (10)[3]
		return x, "end"`)
	if err != nil {
		t.Fatal(err)
	}
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *LState) int { return 0 }))
	idx, _ := L.LoadString(`local a, b = ...; return a + b`)
	mt.RawSetString("__index", idx)
	L.SetMetatable(LNumber(0), mt)
	st, err, vals := L.Resume(co, fn)
	if st != ResumeOK || err != nil || len(vals) != 2 || vals[0] != LNumber(13) {
		t.Fatalf("resume: %v %v %v", st, err, vals)
	}
}

// TestStandardFilesStayOpen: closing io.stdin/stdout/stderr answers nil
// and 5.1's message, and leaves the file open (it is the program's).
func TestStandardFilesStayOpen(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`
		local ok, msg = io.stdout:close()
		assert(ok == nil and msg == "cannot close standard file", msg)
		ok, msg = io.close(io.stderr)
		assert(ok == nil and msg == "cannot close standard file", msg)
		assert(io.stdout:write("") == true)
	`); err != nil {
		t.Fatal(err)
	}
}

// TestOsExecuteStatus: os.execute answers C's system() as Lua 5.1 does:
// the raw wait status, 1 for a shell without a command.
func TestOsExecuteStatus(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`
		assert(os.execute() == 1)
		assert(os.execute("exit 0") == 0)
		assert(os.execute("exit 13") == 13 * 256, os.execute("exit 13"))
		assert(os.execute("kill -9 $$") == 9)
	`); err != nil {
		t.Fatal(err)
	}
}

// TestSharedTableReadsWriteNothing reads a shared table from many
// goroutines at once, every way a state reads one (go test -race finds a
// write): lookups of every kind of key, Next through all of it, ForEach
// and the border.
func TestSharedTableReadsWriteNothing(t *testing.T) {
	tb := newLTable(0, 0)
	for i := 1; i <= 40; i++ {
		tb.RawSetInt(i, LNumber(i))
		tb.RawSetString("k"+strconv.Itoa(i), LNumber(i))
		tb.RawSet(LNumber(float64(i)+0.5), LTrue)
	}
	tb.RawSetInt(50, LTrue) // past the array part
	tb.Share()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 50; r++ {
				n := 0
				for k, v := tb.Next(LNil); k != LNil; k, v = tb.Next(k) {
					if v == LNil {
						t.Error("nil value")
					}
					n++
				}
				tb.ForEach(func(LValue, LValue) { n-- })
				if n != 0 || tb.Len() != 40 || tb.RawGetString("k7") != LNumber(7) ||
					tb.RawGet(LString("k9")) != LNumber(9) || tb.RawGetInt(50) != LTrue ||
					tb.RawGet(LNumber(3.5)) != LTrue || tb.rawGetStringH("k3", strHash("k3")) != LNumber(3) {
					t.Error("reads differ")
				}
			}
		}()
	}
	wg.Wait()
}

// TestShareLaysOutNodesOnce: a shared table's hash part is the same
// whatever order it was filled in (the libraries are filled in Go map
// order), with twice as many nodes as keys, every key still found.
func TestShareLaysOutNodesOnce(t *testing.T) {
	keys := []string{"send", "receive", "spawn", "self", "call", "reply", "kill", "link", "monitor", "whereis", "register"}
	fill := func(order []string) *LTable {
		tb := newLTable(0, 0)
		for _, k := range order {
			tb.RawSetString(k, LString("v-"+k))
		}
		tb.RawSetInt(1, LTrue)
		tb.Share()
		return tb
	}
	reversed := make([]string, len(keys))
	for i, k := range keys {
		reversed[len(keys)-1-i] = k
	}
	a, b := fill(keys), fill(reversed)
	if len(a.node) < 2*len(keys) {
		t.Errorf("%d nodes for %d keys", len(a.node), len(keys))
	}
	for i := range a.node {
		if a.node[i].key != b.node[i].key || a.node[i].next != b.node[i].next {
			t.Fatalf("node %d: %v (next %d) filled in one order, %v (next %d) in the other", i, a.node[i].key, a.node[i].next, b.node[i].key, b.node[i].next)
		}
	}
	for _, k := range keys {
		if v := a.RawGetString(k); v != LString("v-"+k) {
			t.Errorf("%s: %v", k, v)
		}
	}
	if a.RawGetInt(1) != LTrue {
		t.Error("the array part lost its item")
	}
}

// TestUnchangedTellsNegativeZero: a view that holds -0 where its base
// holds 0 has been written (1/x tells them apart), though 0 == -0.
func TestUnchangedTellsNegativeZero(t *testing.T) {
	lib := NewTable(0, 1)
	lib.RawSetString("zero", LNumber(0))
	lib.Share()
	globals := NewTable(0, 1)
	globals.RawSetString("lib", lib)
	globals.Share()
	L := NewState(Options{SkipOpenLibs: true})
	defer L.Close()
	g := newLTable(0, 0)
	L.G.Global, L.Env = g, g
	L.G.Views.Bind(globals)
	if err := L.DoString(`local z = lib.zero`); err != nil {
		t.Fatal(err)
	}
	if !L.G.Views.Unchanged(nil) {
		t.Fatal("reading lib.zero changed the views")
	}
	if err := L.DoString(`lib.zero = -0.0`); err != nil {
		t.Fatal(err)
	}
	if L.G.Views.Unchanged(nil) {
		t.Fatal("lib.zero = -0 was not seen")
	}
}
