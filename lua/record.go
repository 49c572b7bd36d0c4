package lua

// A Record is the shape of a table with fixed string keys that Go code
// makes again and again (luarun: http.serve's request table, seven keys
// a request): the keys are laid out in a hash part once, and Make
// copies that layout into a new table made for it (one allocation, no
// hashing, no probing, no boxing of the keys) and puts the values in.
// The table made is an ordinary one: keys may be added, changed and
// removed as in any other.
//
// Invariant: the shape is never written after NewRecord, so Make may
// copy it from any goroutine at once.

import "fmt"

// Record is a table shape: its string keys, in the order Make takes
// their values.
type Record struct {
	shape *LTable // the keys, each with the value LTrue (never read)
	hcap  int     // the hash part the shape was made for
	pos   []int   // pos[i]: the node holding the i-th key
}

// NewRecord is the shape of a table with keys (1 to 8 of them, each
// once; more would not fit the table's own allocation).
func NewRecord(keys ...string) *Record {
	if len(keys) == 0 || len(keys) > 8 {
		panic(fmt.Sprintf("lua.NewRecord: 1 to 8 keys, got %d", len(keys)))
	}
	shape := newLTable(0, len(keys))
	for _, k := range keys {
		if shape.RawGetString(k) != LNil {
			panic(fmt.Sprintf("lua.NewRecord: key %q twice", k))
		}
		shape.RawSetString(k, LTrue)
	}
	if len(shape.node) != len(newLTable(0, len(keys)).node) { // Make copies the nodes into such a table
		panic("lua.NewRecord: the keys did not fit the table made for them")
	}
	r := &Record{shape: shape, hcap: len(keys), pos: make([]int, len(keys))}
	for i, k := range keys {
		r.pos[i] = shape.findStr(k)
	}
	return r
}

// Make is a new table of L (charged as CreateTable charges) holding the
// record's keys, the i-th with values[i]. There must be one value a key;
// LNil leaves its key absent.
func (r *Record) Make(L *LState, values ...LValue) *LTable {
	if len(values) != len(r.pos) {
		panic(fmt.Sprintf("lua.Record.Make: %d values for %d keys", len(values), len(r.pos)))
	}
	L.charge(tableCharge(0, r.hcap))
	tb := newTableIn(&L.G.home, 0, r.hcap)
	copy(tb.node, r.shape.node)
	tb.setLastfree(int(r.shape.flags & lastfreeMask))
	for i, v := range values {
		tb.node[r.pos[i]].val = v
	}
	return tb
}
