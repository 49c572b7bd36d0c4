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

// A Go string in an interface becomes an LString sharing its header:
// the same string, no allocation; anything else is refused.
func TestStringValueOf(t *testing.T) {
	var v any = string([]byte("built at run time"))
	var lv LValue
	allocs := testing.AllocsPerRun(100, func() { lv, _ = StringValueOf(v) })
	if allocs != 0 {
		t.Fatalf("%v allocations, want 0", allocs)
	}
	if lv != LValue(LString("built at run time")) {
		t.Fatalf("%#v", lv)
	}
	for _, v := range []any{"", "x"} {
		if lv, ok := StringValueOf(v); !ok || lv != LValue(LString(v.(string))) {
			t.Fatalf("%q: %#v, %v", v, lv, ok)
		}
	}
	for _, v := range []any{nil, 1.5, LString("x"), []byte("x")} {
		if lv, ok := StringValueOf(v); ok || lv != nil {
			t.Fatalf("%#v: %#v, %v", v, lv, ok)
		}
	}
}

// An LString in an interface becomes a Go string sharing its header:
// the same string, no allocation; anything else is refused.
func TestGoStringOf(t *testing.T) {
	var v any = LString(string([]byte("built at run time")))
	var s any
	allocs := testing.AllocsPerRun(100, func() { s, _ = GoStringOf(v) })
	if allocs != 0 {
		t.Fatalf("%v allocations, want 0", allocs)
	}
	if s != any("built at run time") {
		t.Fatalf("%#v", s)
	}
	var lv LValue = LString("x") // from an LValue too
	if s, ok := GoStringOf(lv); !ok || s != any("x") {
		t.Fatalf("%#v, %v", s, ok)
	}
	for _, v := range []any{nil, LNumber(1), "x", []byte("x")} {
		if s, ok := GoStringOf(v); ok || s != nil {
			t.Fatalf("%#v: %#v, %v", v, s, ok)
		}
	}
}
