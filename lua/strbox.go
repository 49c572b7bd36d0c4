package lua

// luarun: LString values without a box of their own.
//
// A string converted to an interface (LString(s) as an LValue) is an
// allocation of its header, one per value. StringAt makes an LValue
// that points at a header already in the heap (a field of an object
// never written again).
//
// StringValueOf and GoStringOf turn a Go string in an interface into an
// LString LValue and back without boxing it again: the new interface
// points at the header the old one boxed. Safe because Go never writes
// a boxed value, and string and LString have one layout.

import "unsafe"

// StringAt is LString(*p) as an LValue whose box is *p itself: no
// allocation, where the string's header already lives in a heap object
// (a struct field, a slice element) that is never written again — the
// value reads it for as long as the value lives, and keeps the object
// alive.
func StringAt(p *string) LValue {
	var v LValue = LString("") // LString's itab, no allocation
	(*iface)(unsafe.Pointer(&v)).word = unsafe.Pointer(p)
	return v
}

// eface is an empty interface's layout (as iface is a non-empty one's).
type eface struct {
	typ  unsafe.Pointer
	word unsafe.Pointer
}

// StringValueOf is the Go string that v holds as an LString LValue,
// sharing v's boxed header rather than boxing the string again (a boxed
// value is never written, so two interfaces may point at one); ok is
// false, and the LValue nil, if v holds no string. A message that came
// as a Go string (from another node, from Go) reaches Lua this way
// without an allocation.
func StringValueOf(v any) (lv LValue, ok bool) {
	if _, ok := v.(string); !ok {
		return nil, false
	}
	lv = LString("") // LString's itab, no allocation
	(*iface)(unsafe.Pointer(&lv)).word = (*eface)(unsafe.Pointer(&v)).word
	return lv, true
}

// GoStringOf is the string that v holds as a Go string in an interface,
// sharing v's boxed header, as StringValueOf does the other way; ok is
// false, and the result nil, if v holds no LString. A Lua string sent
// to another node becomes a payload value this way without an
// allocation.
func GoStringOf(v any) (s any, ok bool) {
	if _, ok := v.(LString); !ok {
		return nil, false
	}
	s = "" // string's type, no allocation
	(*eface)(unsafe.Pointer(&s)).word = (*eface)(unsafe.Pointer(&v)).word
	return s, true
}
