package lua

// luarun: frozen tables.
//
// luarun's template tables (the process, string, math... modules every
// process reads through its view, and the base functions) are filled once
// and then only read, by every worker at once. A lookup in a table
// (RawGet*) writes nothing, so such a table is as safe to read from many
// goroutines as a map; Freeze marks a table filled for good. It used to
// build a second index of the string keys; the hash part laid out as Lua
// 5.1's (table.go) is that index now, and the mark is kept for the
// embedder's checks. A string write clears it.

// Freeze marks the table as filled for reading, and reports whether it
// has string keys to be read. The mark holds until the next string key is
// set or removed; the caller must write no key while others read.
func (tb *LTable) Freeze() bool {
	for i := range tb.node {
		n := &tb.node[i]
		if _, ok := n.key.(LString); ok && n.val != LNil {
			tb.flags |= flagFrozen
			return true
		}
	}
	return false
}

// IsFrozen reports whether Freeze marked the table and no string key was
// written since.
func (tb *LTable) IsFrozen() bool { return tb.flags&flagFrozen != 0 }
