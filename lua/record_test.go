package lua

import (
	"fmt"
	"sort"
	"testing"
)

// pairsOf lists t's keys and values through Next, sorted.
func pairsOf(t *LTable) []string {
	var out []string
	for k, v := t.Next(LNil); k != LNil; k, v = t.Next(k) {
		out = append(out, fmt.Sprintf("%v=%v", k, v))
	}
	sort.Strings(out)
	return out
}

// A table a Record makes is the table RawSetString makes with the same
// keys and values: every key found, pairs visits each once, and it goes
// on as an ordinary table (keys added past its size, changed, removed).
func TestRecordMakesTheTable(t *testing.T) {
	L := NewState(Options{SkipOpenLibs: true})
	defer L.Close()
	for n := 1; n <= 8; n++ {
		keys := []string{"method", "path", "url", "query", "headers", "body", "remote", "x"}[:n]
		r := NewRecord(keys...)
		values := make([]LValue, n)
		want := L.CreateTable(0, n)
		for i, k := range keys {
			values[i] = LString(fmt.Sprint("v", i))
			want.RawSetString(k, values[i])
		}
		got := r.Make(L, values...)
		if fmt.Sprint(pairsOf(got)) != fmt.Sprint(pairsOf(want)) {
			t.Fatalf("%d keys: %v, want %v", n, pairsOf(got), pairsOf(want))
		}
		for i, k := range keys {
			if v := got.RawGetString(k); v != values[i] {
				t.Fatalf("%d keys: %s = %v, want %v", n, k, v, values[i])
			}
		}
		for i := range 20 { // past the hash part: a rehash
			got.RawSetString(fmt.Sprint("more", i), LNumber(i))
			want.RawSetString(fmt.Sprint("more", i), LNumber(i))
		}
		got.RawSetString(keys[0], LString("changed"))
		want.RawSetString(keys[0], LString("changed"))
		got.RawSetString(keys[n-1], LNil)
		want.RawSetString(keys[n-1], LNil)
		if fmt.Sprint(pairsOf(got)) != fmt.Sprint(pairsOf(want)) {
			t.Fatalf("%d keys, grown: %v, want %v", n, pairsOf(got), pairsOf(want))
		}
	}
}

// Each table is its own: writing one leaves the shape and the others
// alone; an LNil value leaves its key absent.
func TestRecordTablesAreIndependent(t *testing.T) {
	L := NewState()
	defer L.Close()
	r := NewRecord("a", "b")
	t1 := r.Make(L, LNumber(1), LNil)
	t1.RawSetString("a", LNumber(10))
	t1.RawSetString("c", LNumber(30))
	t2 := r.Make(L, LNumber(2), LNumber(3))
	if got := fmt.Sprint(pairsOf(t1), pairsOf(t2)); got != "[a=10 c=30] [a=2 b=3]" {
		t.Fatal(got)
	}
	L.SetGlobal("t", t2)
	if err := L.DoString(`local n = 0; for k in pairs(t) do n = n + 1 end; assert(n == 2 and t.a == 2 and t.b == 3)`); err != nil {
		t.Fatal(err)
	}
}

// A record table is one allocation: the table and its nodes.
func TestRecordMakeAllocs(t *testing.T) {
	L := NewState(Options{SkipOpenLibs: true})
	defer L.Close()
	r := NewRecord("method", "path", "url", "query", "headers", "body", "remote")
	v := LString("x")
	allocs := testing.AllocsPerRun(100, func() { r.Make(L, v, v, v, v, v, v, v) })
	if allocs != 1 {
		t.Fatalf("%v allocations, want 1", allocs)
	}
}

// StringAt boxes a string where its header lies: no allocation, and the
// value reads the string.
func TestStringAt(t *testing.T) {
	type req struct{ a, b string }
	r := &req{a: "alpha", b: string([]byte("beta"))}
	var v LValue
	allocs := testing.AllocsPerRun(100, func() { v = StringAt(&r.b) })
	if allocs != 0 || v != LString("beta") || v.String() != "beta" {
		t.Fatalf("%v allocations, value %v", allocs, v)
	}
}
