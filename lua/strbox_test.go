package lua

import "testing"

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
