package payload

// A short string read from the wire, boxed as an interface in one
// allocation instead of two.
//
// string(b) as an `any` allocates twice: the bytes, then the header the
// interface points at. For a short string boxString allocates one object
// holding both, the header first, pointing at the bytes beside it: the
// interface points at the header, and the string (or any substring of
// it) keeps the object alive. Nothing writes the object after it is
// made, as Go requires of a string's bytes and of a boxed value.

import "unsafe"

// shortString and mediumString are a string's header and bytes in one
// object (32 and 64 bytes: whole size classes).
type shortString struct {
	s string
	b [16]byte
}

type mediumString struct {
	s string
	b [48]byte
}

// eface is an empty interface's layout.
type eface struct {
	typ  unsafe.Pointer
	word unsafe.Pointer
}

// boxString is string(b) as an `any`.
func boxString(b []byte) any {
	switch n := len(b); {
	case n == 0:
		return "" // no allocation
	case n <= len(shortString{}.b):
		p := new(shortString)
		copy(p.b[:], b)
		p.s = unsafe.String(&p.b[0], n)
		return stringAt(&p.s)
	case n <= len(mediumString{}.b):
		p := new(mediumString)
		copy(p.b[:], b)
		p.s = unsafe.String(&p.b[0], n)
		return stringAt(&p.s)
	}
	return string(b)
}

// stringAt is *s as an `any` that points at s, which must never change.
func stringAt(s *string) any {
	v := any("") // string's type, no allocation
	(*eface)(unsafe.Pointer(&v)).word = unsafe.Pointer(s)
	return v
}
