package lua

// luarun: a frozen table's string keys in an open-addressing index.
//
// luarun's template tables (the process, string, math... modules every
// process reads through its proxy, and the base functions) are filled
// once and then only read, by every worker at once, on the hottest paths
// (process.send and process.receive are looked up by every call). Freeze
// gives such a table a second index of its string keys: a slice of
// key-value slots at most a quarter full, found by an FNV-1a hash of the
// key (names are short) and linear probing — most lookups are a short
// loop and one string comparison, against the Go map's full hash, group
// probe and control-byte match. Nothing is written on a lookup, so a
// frozen table is as safe to read from many goroutines as a map. A
// string write (RawSetString) drops the index, and the table reads from
// its map again; the map, the key list and Next are left as they were.

// frozenLoad is the index's size per key (a power of two at least this).
const frozenLoad = 4

type frozenSlot struct {
	key   string
	value LValue // nil: an empty slot
}

type frozenStrings struct {
	shift uint32 // 32 - log2(len(slots))
	mask  uint32 // len(slots) - 1
	slots []frozenSlot
}

// home is the first slot to look for key in.
func (f *frozenStrings) home(key string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return h >> f.shift // the high bits: FNV mixes them best
}

func (f *frozenStrings) get(key string) LValue {
	for i := f.home(key); ; i = (i + 1) & f.mask {
		s := &f.slots[i]
		if s.value == nil {
			return LNil
		}
		if s.key == key {
			return s.value
		}
	}
}

// Freeze indexes the table's string keys for fast reads when they have
// left its small slice (a small table is as fast to scan), and reports
// whether it did. The index holds until the next string key is set or
// removed; the caller must write no key while others read.
func (tb *LTable) Freeze() bool {
	h := tb.hash
	if h == nil || len(h.strdict) == 0 {
		return false
	}
	bits := uint32(1)
	for 1<<bits < frozenLoad*len(h.strdict) {
		bits++
	}
	f := &frozenStrings{shift: 32 - bits, mask: 1<<bits - 1, slots: make([]frozenSlot, 1<<bits)}
	for k, v := range h.strdict {
		i := f.home(k)
		for f.slots[i].value != nil {
			i = (i + 1) & f.mask
		}
		f.slots[i] = frozenSlot{k, v}
	}
	h.frozen = f
	return true
}

// IsFrozen reports whether the table's string keys are in a frozen index.
func (tb *LTable) IsFrozen() bool { return tb.hash != nil && tb.hash.frozen != nil }
