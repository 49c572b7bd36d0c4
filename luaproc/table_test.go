package luaproc

import (
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"

	lua "github.com/luarun/luarun/lua"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordFromGo: a record a command returns (a Go map made a table)
// reads, traverses and changes like any table, in Go and in Lua, with
// few keys (a slice in the table) and many (maps).
func TestRecordFromGo(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	c := &converter{}
	for _, n := range []int{0, 2, 8, 9, 30} {
		m := map[string]any{}
		want := map[string]lua.LValue{}
		for i := range n {
			k := string(rune('a'+i%26)) + string(rune('A'+i/26))
			m[k] = i
			want[k] = lua.LNumber(i)
		}
		tb := c.toLua(L, m).(*lua.LTable)
		assert.Equal(t, want, nextAll(tb), "%d keys", n)
		L.SetGlobal("rec", tb)
		L.SetGlobal("n", lua.LNumber(n))
		require.NoError(t, L.DoString(`
			local seen = 0
			for k, v in pairs(rec) do seen = seen + 1; assert(rec[k] == v) end
			assert(seen == n, "pairs saw " .. seen)
			for k in pairs(rec) do rec[k] = nil end -- deleting while traversing
			assert(next(rec) == nil, "left after deleting")
			rec.x, rec.y = 1, 2
			assert(rec.x == 1 and rec.y == 2 and #rec == 0)`), "%d keys", n)
	}
}

// nextAll walks t with Next, as pairs does, failing on a key seen twice.
func nextAll(t *lua.LTable) map[string]lua.LValue {
	out := map[string]lua.LValue{}
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		s := string(k.(lua.LString))
		if _, twice := out[s]; twice {
			panic("key " + s + " seen twice")
		}
		out[s] = v
	}
	return out
}

// Tables keep their first string keys in a slice (luarun's gopher-lua:
// lua/FORK.md). TestTablesAgainstAMap checks tables
// against a Go map through every operation that reads or writes keys,
// with tables that start with room for up to 12 keys, across the move of
// the string keys to maps at the ninth.

// tableContents reads tb with Next, failing on a key seen twice, and
// checks ForEach and RawGet agree.
func tableContents(t *testing.T, tb *lua.LTable) map[lua.LValue]lua.LValue {
	t.Helper()
	out := map[lua.LValue]lua.LValue{}
	for k, v := tb.Next(lua.LNil); k != lua.LNil; k, v = tb.Next(k) {
		if _, twice := out[k]; twice {
			t.Fatalf("next gave %v twice", k)
		}
		if got := tb.RawGet(k); got != v {
			t.Fatalf("next gave %v = %v, RawGet %v", k, v, got)
		}
		out[k] = v
	}
	n := 0
	tb.ForEach(func(k, v lua.LValue) {
		n++
		if out[k] != v {
			t.Fatalf("ForEach gave %v = %v, next %v", k, v, out[k])
		}
	})
	if n != len(out) {
		t.Fatalf("ForEach gave %d pairs, next %d", n, len(out))
	}
	return out
}

func TestTablesAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	keys := []lua.LValue{lua.LTrue, lua.LNumber(0), lua.LNumber(-1), lua.LNumber(0.5), lua.LNumber(1), lua.LNumber(2)}
	for i := range 14 {
		keys = append(keys, lua.LString(fmt.Sprintf("k%d", i)))
	}
	L := lua.NewState()
	defer L.Close()
	for round := range 300 {
		tb := L.CreateTable(0, rng.Intn(12))
		model := map[lua.LValue]lua.LValue{}
		for op := range 60 {
			k := keys[rng.Intn(len(keys))]
			if rng.Intn(3) == 0 {
				tb.RawSet(k, lua.LNil)
				delete(model, k)
			} else {
				v := lua.LNumber(op)
				tb.RawSet(k, v)
				model[k] = v
			}
			if got := tableContents(t, tb); !reflect.DeepEqual(got, model) {
				t.Fatalf("round %d op %d: table %v, want %v", round, op, got, model)
			}
			for _, k := range keys {
				want, ok := model[k]
				if !ok {
					want = lua.LNil
				}
				if got := tb.RawGet(k); got != want {
					t.Fatalf("round %d op %d: [%v] = %v, want %v", round, op, k, got, want)
				}
			}
		}
		// A traversal that deletes every key it visits sees each once and
		// leaves the table empty, as Lua's next allows.
		seen := 0
		for k, _ := tb.Next(lua.LNil); k != lua.LNil; k, _ = tb.Next(k) {
			seen++
			tb.RawSet(k, lua.LNil)
		}
		if seen != len(model) || len(tableContents(t, tb)) != 0 {
			t.Fatalf("round %d: deleting traversal saw %d of %d", round, seen, len(model))
		}
	}
}

// TestForEachOnlyReads: luarun's template tables are shared by every
// worker and only read. ForEach over a small table (whose keys Next
// would box into the table) writes nothing: under -race, goroutines
// walking one table at once report no race, and see every key.
func TestForEachOnlyReads(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	tb := L.CreateTable(0, 4)
	for _, k := range []string{"a", "b", "c"} {
		tb.RawSetString(k, lua.LTrue)
	}
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for g := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				tb.ForEach(func(lua.LValue, lua.LValue) { counts[g]++ })
			}
		}()
	}
	wg.Wait()
	for g, n := range counts {
		assert.Equal(t, 300, n, "goroutine %d", g)
	}
}

// TestFrozenTables: a frozen table (Freeze, for the template tables every
// process reads) answers every present and absent string key as its map
// did, from several goroutines at once (-race: a lookup writes nothing);
// a string write drops the index and the table reads as a map again.
func TestFrozenTables(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{9, 12, 30, 64, 200, 3000} {
		tb := L.CreateTable(0, 0)
		want := map[string]lua.LValue{}
		for i := range n {
			k := fmt.Sprintf("%c%d_%c", 'a'+rng.Intn(26), i, 'a'+rng.Intn(26))
			want[k] = lua.LNumber(i)
			tb.RawSetString(k, lua.LNumber(i))
		}
		tb.RawSet(lua.LNumber(0.5), lua.LTrue) // a key that is not a string
		require.True(t, tb.Freeze(), "%d keys", n)
		absent := []string{"", "x", "send", "a0_", "zz_z", "a0_aa"}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k, v := range want {
					assert.Equal(t, v, tb.RawGetString(k), "%d keys: %q", n, k)
					assert.Equal(t, v, tb.RawGet(lua.LString(k)), "%d keys: %q", n, k)
				}
				for _, k := range absent {
					if _, ok := want[k]; !ok {
						assert.Equal(t, lua.LNil, tb.RawGetString(k), "%d keys: absent %q", n, k)
					}
				}
				assert.Equal(t, lua.LTrue, tb.RawGet(lua.LNumber(0.5)))
			}()
		}
		wg.Wait()
		for k := range want {
			tb.RawSetString(k, lua.LString("changed")) // the index goes at the first
			assert.False(t, tb.IsFrozen())
			assert.Equal(t, lua.LString("changed"), tb.RawGetString(k))
			tb.RawSetString(k, lua.LNil)
			assert.Equal(t, lua.LNil, tb.RawGetString(k))
			break
		}
		tb.RawSetString("new", lua.LTrue)
		assert.Equal(t, lua.LTrue, tb.RawGetString("new"))
	}
	// a table with no string keys has nothing to freeze
	tb := L.CreateTable(0, 0)
	tb.RawSet(lua.LNumber(0.5), lua.LTrue)
	assert.False(t, tb.Freeze())
	assert.Equal(t, lua.LTrue, tb.RawGet(lua.LNumber(0.5)))
}

// TestTemplateTablesAreShared: the shared globals and each built-in
// module table (every process reads them through its view, lua/cow.go)
// are shared, and frozen when they have more keys than a small table
// holds.
func TestTemplateTablesAreShared(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	tpl := rt.template()
	assert.True(t, tpl.globals.IsShared() && tpl.globals.IsFrozen(), "globals")
	frozen := 0
	tpl.globals.ForEach(func(k, v lua.LValue) {
		m, ok := v.(*lua.LTable)
		if !ok {
			return
		}
		assert.True(t, m.IsShared(), "module %s", k)
		n := 0
		m.ForEach(func(lua.LValue, lua.LValue) { n++ })
		if n > 8 {
			assert.True(t, m.IsFrozen(), "module %s (%d keys)", k, n)
			frozen++
		}
	})
	assert.GreaterOrEqual(t, frozen, 4) // process, string, table, math at least
}

func TestIntegerValue(t *testing.T) {
	for _, n := range []int64{0, 1, 200, 1023, 1024, -1, 1 << 40} {
		assert.Equal(t, lua.LNumber(n), integerValue(n), "%d", n)
	}
}
