package lua

// luarun: a table's first string keys live in a slice of key-value pairs
// (LTable.small) instead of gopher-lua's three structures — a map from
// key to value, a list of keys that next() walks, and a map from key to
// its index in that list, each made by the first key — which cost over
// 600 bytes and a dozen allocations for a table of two fields. Reads scan
// the slice, comparing lengths first: for smallStrings keys or fewer that
// is as fast as hashing the key. The ninth live key moves them all to the
// maps (spillSmall), where they stay. Deleting a key sets its value to
// nil and keeps its slot, so a traversal that deletes goes on; the slots
// of deleted keys are reused or dropped when a new key needs room.

const defaultArrayCap = 32
const defaultHashCap = 32

// smallStrings is the most string keys a table keeps in small.
const smallStrings = 8

type lValueArraySorter struct {
	L      *LState
	Fn     *LFunction
	Values []LValue
	steps  int // comparisons before the next hand-over to L.TickN (luarun)
}

// sortBatch is how many comparisons a sort counts before it hands them to
// its state's interrupt budget. (luarun)
const sortBatch = 64

func (lv *lValueArraySorter) Len() int {
	return len(lv.Values)
}

func (lv *lValueArraySorter) Swap(i, j int) {
	lv.Values[i], lv.Values[j] = lv.Values[j], lv.Values[i]
}

// Less compares two items; each comparison is a step of the interrupt
// budget, counted on the sorter and handed to L in batches (TickN: a
// kill stops a long sort). (luarun)
func (lv *lValueArraySorter) Less(i, j int) bool {
	if lv.steps--; lv.steps < 0 {
		lv.steps = sortBatch
		lv.L.TickN(sortBatch + 1)
	}
	if lv.Fn != nil {
		lv.L.Push(lv.Fn)
		lv.L.Push(lv.Values[i])
		lv.L.Push(lv.Values[j])
		lv.L.Call(2, 1)
		return LVAsBool(lv.L.reg.Pop())
	}
	return lessThan(lv.L, lv.Values[i], lv.Values[j])
}

func newLTable(acap int, hcap int) *LTable {
	if acap < 0 {
		acap = 0
	}
	if hcap < 0 {
		hcap = 0
	}
	tb := &LTable{}
	tb.Metatable = LNil
	if acap != 0 {
		tb.array = make([]LValue, 0, acap)
	}
	switch {
	case hcap > smallStrings:
		tb.hash = &tableHash{strdict: make(map[string]LValue, hcap)}
	case hcap > 0:
		tb.small = make([]strSlot, 0, hcap)
	}
	return tb
}

// Len returns length of this LTable without using __len.
func (tb *LTable) Len() int {
	tb.materialize()
	if tb.array == nil {
		return 0
	}
	var prev LValue = LNil
	for i := len(tb.array) - 1; i >= 0; i-- {
		v := tb.array[i]
		if prev == LNil && v != LNil {
			return i + 1
		}
		prev = v
	}
	return 0
}

// Append appends a given LValue to this LTable.
func (tb *LTable) Append(value LValue) {
	if value == LNil {
		return
	}
	tb.materialize()
	if tb.array == nil {
		tb.array = make([]LValue, 0, defaultArrayCap)
	}
	if len(tb.array) == 0 || tb.array[len(tb.array)-1] != LNil {
		tb.array = append(tb.array, value)
	} else {
		i := len(tb.array) - 2
		for ; i >= 0; i-- {
			if tb.array[i] != LNil {
				break
			}
		}
		tb.array[i+1] = value
	}
}

// Insert inserts a given LValue at position `i` in this table.
func (tb *LTable) Insert(i int, value LValue) {
	tb.materialize()
	if tb.array == nil {
		tb.array = make([]LValue, 0, defaultArrayCap)
	}
	if i > len(tb.array) {
		tb.RawSetInt(i, value)
		return
	}
	if i <= 0 {
		tb.RawSet(LNumber(i), value)
		return
	}
	i -= 1
	tb.array = append(tb.array, LNil)
	copy(tb.array[i+1:], tb.array[i:])
	tb.array[i] = value
}

// MaxN returns a maximum number key that nil value does not exist before it.
func (tb *LTable) MaxN() int {
	tb.materialize()
	if tb.array == nil {
		return 0
	}
	for i := len(tb.array) - 1; i >= 0; i-- {
		if tb.array[i] != LNil {
			return i + 1
		}
	}
	return 0
}

// Remove removes from this table the element at a given position.
func (tb *LTable) Remove(pos int) LValue {
	tb.materialize()
	if tb.array == nil {
		return LNil
	}
	larray := len(tb.array)
	if larray == 0 {
		return LNil
	}
	i := pos - 1
	oldval := LNil
	switch {
	case i >= larray:
		// nothing to do
	case i == larray-1 || i < 0:
		oldval = tb.array[larray-1]
		tb.array = tb.array[:larray-1]
	default:
		oldval = tb.array[i]
		copy(tb.array[i:], tb.array[i+1:])
		tb.array[larray-1] = nil
		tb.array = tb.array[:larray-1]
	}
	return oldval
}

// RawSet sets a given LValue to a given index without the __newindex metamethod.
// It is recommended to use `RawSetString` or `RawSetInt` for performance
// if you already know the given LValue is a string or number.
func (tb *LTable) RawSet(key LValue, value LValue) {
	switch v := key.(type) {
	case LNumber:
		if isArrayKey(v) {
			tb.beforeWrite(value)
			if tb.array == nil {
				tb.array = make([]LValue, 0, defaultArrayCap)
			}
			index := int(v) - 1
			alen := len(tb.array)
			switch {
			case index == alen:
				tb.array = append(tb.array, value)
			case index > alen:
				for i := 0; i < (index - alen); i++ {
					tb.array = append(tb.array, LNil)
				}
				tb.array = append(tb.array, value)
			case index < alen:
				tb.array[index] = value
			}
			return
		}
	case LString:
		tb.RawSetString(string(v), value)
		return
	}

	tb.RawSetH(key, value)
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	if key < 1 || key >= MaxArrayIndex {
		tb.RawSetH(LNumber(key), value)
		return
	}
	tb.beforeWrite(value)
	if tb.array == nil {
		tb.array = make([]LValue, 0, 32)
	}
	index := key - 1
	alen := len(tb.array)
	switch {
	case index == alen:
		tb.array = append(tb.array, value)
	case index > alen:
		for i := 0; i < (index - alen); i++ {
			tb.array = append(tb.array, LNil)
		}
		tb.array = append(tb.array, value)
	case index < alen:
		tb.array[index] = value
	}
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	tb.beforeWrite(value)
	if h := tb.hash; h == nil || h.strdict == nil {
		if tb.setSmall(key, value) {
			return
		}
		tb.spillSmall()
	}
	h := tb.hashPart()
	h.frozen = nil
	if value == LNil {
		// TODO tb.keys and tb.k2i should also be removed
		delete(h.strdict, key)
	} else {
		h.strdict[key] = value
		lkey := LString(key)
		if _, ok := h.k2i[lkey]; !ok {
			h.k2i[lkey] = len(h.keys)
			h.keys = append(h.keys, lkey)
		}
	}
}

// setSmall sets key in small and reports whether it could: false when key
// is new and small has smallStrings live keys already.
func (tb *LTable) setSmall(key string, value LValue) bool {
	for i := range tb.small {
		if tb.small[i].key == key {
			tb.small[i].value = value
			return true
		}
	}
	if value == LNil {
		return true
	}
	if len(tb.small) == smallStrings {
		// A new key: a traversal may not go on after it (the manual makes
		// next undefined then), so the deleted keys' slots can go.
		live := tb.small[:0]
		for _, slot := range tb.small {
			if slot.value != LNil {
				live = append(live, slot)
			}
		}
		clear(tb.small[len(live):])
		tb.small = live
		if tb.hash != nil {
			tb.hash.boxed = nil
		}
		if len(live) == smallStrings {
			return false
		}
	}
	if tb.small == nil {
		tb.small = make([]strSlot, 0, 2)
	}
	tb.small = append(tb.small, strSlot{key, value})
	return true
}

// spillSmall moves the string keys from small to the hash part's maps.
func (tb *LTable) spillSmall() {
	h := tb.hashPart()
	h.strdict = make(map[string]LValue, 2*smallStrings)
	for i, slot := range tb.small {
		if slot.value == LNil {
			continue
		}
		h.strdict[slot.key] = slot.value
		var lkey LValue
		if i < len(h.boxed) {
			lkey = h.boxed[i]
		} else {
			lkey = LString(slot.key)
		}
		h.k2i[lkey] = len(h.keys)
		h.keys = append(h.keys, lkey)
	}
	tb.small, h.boxed = nil, nil
}

// hashPart returns tb.hash, made if tb has none, with its key list.
func (tb *LTable) hashPart() *tableHash {
	if tb.hash == nil {
		tb.hash = &tableHash{}
	}
	if tb.hash.keys == nil {
		tb.hash.keys = []LValue{}
		tb.hash.k2i = map[LValue]int{}
	}
	return tb.hash
}

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	if s, ok := key.(LString); ok {
		tb.RawSetString(string(s), value)
		return
	}
	tb.beforeWrite(value)
	h := tb.hashPart()
	if h.dict == nil {
		h.dict = make(map[LValue]LValue, len(h.strdict))
	}

	if value == LNil {
		// TODO tb.keys and tb.k2i should also be removed
		delete(h.dict, key)
	} else {
		h.dict[key] = value
		if _, ok := h.k2i[key]; !ok {
			h.k2i[key] = len(h.keys)
			h.keys = append(h.keys, key)
		}
	}
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	switch v := key.(type) {
	case LNumber:
		if isArrayKey(v) {
			if index := int(v) - 1; index < len(tb.array) {
				if v := tb.array[index]; v != LNil || tb.cow == nil {
					return v
				}
			}
			if tb.cow != nil {
				return tb.cowGet(key)
			}
			return LNil
		}
	case LString:
		return tb.RawGetString(string(v))
	}
	return tb.rawGetDict(key)
}

// rawGetDict returns the value of a key that is not a string from the
// hash part.
func (tb *LTable) rawGetDict(key LValue) LValue {
	if tb.hash != nil && tb.hash.dict != nil {
		if v, ok := tb.hash.dict[key]; ok {
			return v
		}
	}
	if tb.cow != nil {
		return tb.cowGet(key)
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	index := key - 1
	if index < len(tb.array) && index >= 0 {
		if v := tb.array[index]; v != LNil || tb.cow == nil {
			return v
		}
	}
	if tb.cow != nil {
		return tb.cowGet(LNumber(key))
	}
	return LNil
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	if s, sok := key.(LString); sok {
		return tb.RawGetString(string(s))
	}
	return tb.rawGetDict(key)
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	for i := range tb.small {
		if tb.small[i].key == key {
			return tb.small[i].value
		}
	}
	if h := tb.hash; h != nil && h.strdict != nil {
		if f := h.frozen; f != nil {
			return f.get(key)
		}
		if v, ok := h.strdict[key]; ok {
			return v
		}
	}
	if tb.cow != nil {
		return tb.cowGetString(key)
	}
	return LNil
}

// ForEach iterates over this table of elements, yielding each in turn to a given function.
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	tb.materialize()
	if tb.array != nil {
		for i, v := range tb.array {
			if v != LNil {
				cb(LNumber(i+1), v)
			}
		}
	}
	// small as it was: cb may add keys, which may compact it or move its
	// keys to strdict (walked only if they were there from the start)
	small := tb.small
	spilled := tb.hash != nil && tb.hash.strdict != nil
	for i := range small {
		if v := small[i].value; v != LNil {
			// not smallKey: ForEach only reads, so that tables shared
			// read-only between goroutines may be walked at once
			var k LValue
			if tb.hash != nil && i < len(tb.hash.boxed) && len(tb.small) == len(small) {
				k = tb.hash.boxed[i]
			} else {
				k = LString(small[i].key)
			}
			cb(k, v)
		}
	}
	h := tb.hash
	if h == nil {
		return
	}
	if spilled {
		for k, v := range h.strdict {
			if v != LNil {
				cb(LString(k), v)
			}
		}
	}
	if h.dict != nil {
		for k, v := range h.dict {
			if v != LNil {
				cb(k, v)
			}
		}
	}
}

// This function is equivalent to lua_next ( http://www.lua.org/manual/5.1/manual.html#lua_next ).
//
// luarun: the order is the array part, small, then the hash part's keys.
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	tb.materialize()
	init := false
	if key == LNil {
		key = LNumber(0)
		init = true
	}

	if init || key != LNumber(0) {
		if kv, ok := key.(LNumber); ok && isInteger(kv) && int(kv) >= 0 && kv < LNumber(MaxArrayIndex) {
			index := int(kv)
			for ; index < len(tb.array); index++ {
				if v := tb.array[index]; v != LNil {
					return LNumber(index + 1), v
				}
			}
			return tb.nextSmall(0)
		}
	}
	if s, ok := key.(LString); ok && (tb.hash == nil || tb.hash.strdict == nil) {
		for i := range tb.small {
			if tb.small[i].key == string(s) {
				return tb.nextSmall(i + 1)
			}
		}
		return LNil, LNil // not a key of tb
	}
	if tb.hash == nil {
		return LNil, LNil
	}
	i, ok := tb.hash.k2i[key]
	if !ok {
		return LNil, LNil // not a key of tb
	}
	return tb.nextHash(i + 1)
}

// nextSmall is Next from small's slot i on.
func (tb *LTable) nextSmall(i int) (LValue, LValue) {
	for ; i < len(tb.small); i++ {
		if v := tb.small[i].value; v != LNil {
			return tb.smallKey(i), v
		}
	}
	return tb.nextHash(0)
}

// nextHash is Next from the hash part's key i on.
func (tb *LTable) nextHash(i int) (LValue, LValue) {
	if tb.hash == nil {
		return LNil, LNil
	}
	for keys := tb.hash.keys; i < len(keys); i++ {
		if v := tb.RawGetH(keys[i]); v != LNil {
			return keys[i], v
		}
	}
	return LNil, LNil
}

// smallKey returns small[i]'s key as an LValue, boxed once per table (a
// traversal would otherwise allocate on every step). It writes the
// table: Next must not walk a table that other goroutines read at the
// same time (luarun's shared template tables are never walked).
func (tb *LTable) smallKey(i int) LValue {
	if tb.hash == nil {
		tb.hash = &tableHash{}
	}
	h := tb.hash
	if len(h.boxed) <= i {
		if h.boxed == nil {
			h.boxed = make([]LValue, 0, cap(tb.small))
		}
		for j := len(h.boxed); j < len(tb.small); j++ {
			h.boxed = append(h.boxed, LString(tb.small[j].key))
		}
	}
	return h.boxed[i]
}

// beforeWrite readies tb for a write of value: a shared table is never
// written, and a view forgets its base before a key is removed (cow.go).
func (tb *LTable) beforeWrite(value LValue) {
	if tb.hash != nil && tb.hash.shared {
		sharedWrite()
	}
	if value == LNil && tb.cow != nil {
		tb.materialize()
	}
}
