package lua

import (
	"runtime"
	"testing"
)

// A box's values are the strings, compare and hash as LStrings do, and
// outlive the box; past its size it still boxes.
func TestStringBox(t *testing.T) {
	words := []string{"GET", "/path", "", "a longer value, with spaces", "x", "y"}
	box := NewStringBox(4)
	vals := make([]LValue, len(words))
	for i, w := range words {
		vals[i] = box.Value(w)
	}
	box = StringBox{}
	runtime.GC()
	tb := newLTable(0, 0)
	for i, w := range words {
		s, ok := vals[i].(LString)
		if !ok || string(s) != w || vals[i] != LValue(LString(w)) {
			t.Fatalf("value %d: %#v, want %q", i, vals[i], w)
		}
		tb.RawSetString(w, vals[i])
	}
	for _, w := range words {
		if got := tb.RawGet(LString(w)); got != LValue(LString(w)) {
			t.Fatalf("key %q: %#v", w, got)
		}
	}
}

// n strings are one allocation.
func TestStringBoxAllocs(t *testing.T) {
	var sink [4]LValue
	s := string([]byte("built at run time"))
	allocs := testing.AllocsPerRun(100, func() {
		box := NewStringBox(4)
		for i := range sink {
			sink[i] = box.Value(s)
		}
	})
	if allocs != 1 {
		t.Fatalf("%v allocations for 4 strings, want 1", allocs)
	}
}
