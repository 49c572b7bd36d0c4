package lua

import (
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// luarun: tables are laid out as Lua 5.1's ltable.c lays them out, so that
// what a program can see of the layout — the order next and pairs visit
// the keys, and the border #t returns for a table with holes — is what
// lua5.1 shows. A table has
//
//   - an array part, tb.array, for the keys 1..len(tb.array) (LNil where a
//     key is absent), sized as 5.1 sizes it: by the constructor's count of
//     list items, then, each time the hash part is full, to the largest
//     power of two n such that more than n/2 of the keys 1..n are in use
//     (rehash, computeSizes);
//   - a hash part, tb.node, of 0 or a power of two nodes, a chained
//     scatter table with Brent's variation: a key's main position is its
//     5.1 hash (strings: luaS_hash; numbers: the sum of the double's two
//     32-bit words, modulo size-1|1; booleans: the value; other objects:
//     their address, which differs between runs in 5.1 too) and a colliding
//     key goes to a free node found by scanning down from tb.lastfree —
//     unless the key in its main position is not in its own, which then
//     moves there. A key whose value is set to nil keeps its node until the
//     next rehash, so that a traversal that clears keys goes on.
//
// next visits the array part in order, then the nodes in index order; #t
// is luaH_getn, answered without a search while the array part's slots
// in use are all its first ones (LTable.border). A node holds its key as
// an LValue, a string key boxed once, when it is inserted (the VM passes
// its constant's box: setting a field boxes nothing); next returns the
// node's key and writes nothing.

// maxBits is 5.1's MAXBITS: the array part has at most 2^maxBits slots,
// the hash part at most 2^maxBits nodes.
const maxBits = 26

// defaultArrayCap and defaultHashCap are the sizes NewTable gives: none,
// as lua_newtable in 5.1.
const defaultArrayCap = 0
const defaultHashCap = 0

// smallStrings is the number of string keys up to which Freeze leaves a
// table alone (kept for the tests' vocabulary).
const smallStrings = 8

// minNodeCap is the capacity a hash part made by a rehash gets at least:
// a table filled field by field grows to that many keys in one slice.
const minNodeCap = 4

// minArrayCap is the capacity an array part grown by a rehash gets at
// least (the old table's first array): 100 appends allocate 3 arrays.
const minArrayCap = 32

// minMixedArrayCap is the capacity of the first array part a rehash gives
// a table that has a hash part (setArraySize).
const minMixedArrayCap = 4

// scanNodes is the largest hash part whose string keys are looked up by
// comparing them all instead of by hash (the same node is found: a key has
// one node).
const scanNodes = 8

// LTable.flags: the low bits are lastfree, the others marks.
const (
	flagShared   = 1 << 31   // Share's mark (cow.go)
	flagFrozen   = 1 << 30   // Freeze's mark (frozen.go)
	lastfreeMask = 1<<28 - 1 // 1 << 28 is flagView (cow.go), 1 << 29 flagWeak (weak.go)
)

// tnode is a node of a table's hash part (40 bytes).
type tnode struct {
	key  LValue // nil while the node was never used; a removed key stays
	val  LValue // LNil once the key's value is removed; nil while free
	next int32  // 1 + the index of the next node of the chain, 0 at its end
	hash uint32 // a string key's strHash (0 for other keys)
}

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

// newLTable makes a table of no state (its growth charges nothing) with
// an array part of acap slots and a hash part for hcap keys.
func newLTable(acap int, hcap int) *LTable {
	return newTableIn(nil, acap, hcap)
}

// newTableIn makes a table of the state whose home is h (memory.go) with
// an array part of acap slots and a hash part for hcap keys (luaH_new).
func newTableIn(h *tableHome, acap int, hcap int) *LTable {
	var tb *LTable
	switch {
	case hcap <= 0 || acap > 0:
		tb = &LTable{}
	case hcap == 1:
		t := &tableNodes1{}
		tb = &t.LTable
		tb.node = t.nodes[:]
	case hcap == 2:
		t := &tableNodes2{}
		tb = &t.LTable
		tb.node = t.nodes[:]
	case hcap <= 4:
		t := &tableNodes4{}
		tb = &t.LTable
		tb.node = t.nodes[:]
	case hcap <= 8:
		t := &tableNodes8{}
		tb = &t.LTable
		tb.node = t.nodes[:]
	default:
		tb = &LTable{}
	}
	tb.Metatable = LNil
	tb.home = h
	if tb.node != nil {
		tb.flags = uint32(len(tb.node))
		return tb
	}
	if acap > 0 {
		tb.array = make([]LValue, acap)
		fillNil(tb.array)
	}
	if hcap > 0 {
		tb.setNodeVector(hcap)
	}
	return tb
}

// A table made for up to 8 keys (a record: {x = 1, y = 2}) has its hash
// part in the same allocation (the header and 1, 2, 4 or 8 nodes: 120,
// 160, 240, 400 bytes; luarun: 8 for records such as http.serve's
// request table, 7 keys, which took two allocations).
type tableNodes1 struct {
	LTable
	nodes [1]tnode
}

type tableNodes2 struct {
	LTable
	nodes [2]tnode
}

type tableNodes4 struct {
	LTable
	nodes [4]tnode
}

type tableNodes8 struct {
	LTable
	nodes [8]tnode
}

// newTableFb is OP_NEWTABLE's table: B and C are the constructor's counts
// of list items and of fields, in the instruction's "floating point byte"
// (int2Fb).
func newTableFb(h *tableHome, b, c int) *LTable {
	if b == 0 && c == 0 {
		// {}: no hash part, as 5.1 makes it, but room in the same
		// allocation for the first two keys (an object's fields)
		t := &tableNodes2{}
		tb := &t.LTable
		tb.Metatable = LNil
		tb.home = h
		tb.node = t.nodes[:0]
		return tb
	}
	return newTableIn(h, fb2int(b), fb2int(c))
}

// fb2int decodes int2Fb's byte (luaO_fb2int): eeeeexxx is xxx when eeeee is
// 0, else (1xxx) * 2^(eeeee-1).
func fb2int(x int) int {
	e := (x >> 3) & 31
	if e == 0 {
		return x
	}
	return ((x & 7) + 8) << (e - 1)
}

// ceilLog2 is ⌈log2(x)⌉ for x >= 1.
func ceilLog2(x int) int {
	return bits.Len(uint(x - 1))
}

// strHash is 5.1's luaS_hash: seeded with the length, mixing at most 32
// of the characters, from the end.
func strHash(s string) uint32 {
	l := len(s)
	h := uint32(l)
	step := (l >> 5) + 1
	for l1 := l; l1 >= step; l1 -= step {
		h ^= (h << 5) + (h >> 2) + uint32(s[l1-1])
	}
	return h
}

// strPos is a string key's main position; the hash part is not empty.
func (tb *LTable) strPos(s string) int {
	return int(strHash(s) & uint32(len(tb.node)-1))
}

// numPos is a number's main position (hashnum): -0 and 0 at node 0.
func (tb *LTable) numPos(n float64) int {
	if n == 0 {
		return 0
	}
	b := math.Float64bits(n)
	return int((uint32(b) + uint32(b>>32)) % uint32((len(tb.node)-1)|1))
}

// keyPos is the main position of a key (mainposition).
func (tb *LTable) keyPos(key LValue) int {
	switch k := key.(type) {
	case LString:
		return tb.strPos(string(k))
	case LNumber:
		return tb.numPos(float64(k))
	case LBool:
		if k {
			return 1 & (len(tb.node) - 1)
		}
		return 0
	}
	var p uintptr
	switch key.(type) {
	case *LTable, *LFunction, *LUserData, *LState, LChannel:
		// an object: its address (the interface's data word, the pointer
		// itself for these types), as 5.1's hashpointer
		p = uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&key))[1])
	default:
		// a value of a type from outside the package: equal values may
		// be boxed apart, so one chain for them all
	}
	return int(uint32(p) % uint32((len(tb.node)-1)|1))
}

// findStr returns the node of string key, -1 if it has none. A key whose
// value was removed still has its node.
func (tb *LTable) findStr(key string) int {
	if len(tb.node) <= scanNodes {
		// a small hash part: comparing its keys is faster than hashing
		for i := range tb.node {
			if k, ok := tb.node[i].key.(LString); ok && string(k) == key {
				return i
			}
		}
		return -1
	}
	return tb.findStrH(key, strHash(key))
}

// findStrH is findStr of a key whose strHash is h (a constant's, which
// the compiler hashed): its main position, and the nodes of its chain
// whose hash is h.
func (tb *LTable) findStrH(key string, h uint32) int {
	if len(tb.node) == 0 {
		return -1
	}
	i := int(h & uint32(len(tb.node)-1))
	for {
		n := &tb.node[i]
		if n.hash == h {
			if k, ok := n.key.(LString); ok && string(k) == key {
				return i
			}
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// nodePos is the main position of node n's key.
func (tb *LTable) nodePos(n *tnode) int {
	if _, ok := n.key.(LString); ok {
		return int(n.hash & uint32(len(tb.node)-1))
	}
	return tb.keyPos(n.key)
}

// findKey returns the node of a key that is neither a string nor a
// number, -1 if it has none.
func (tb *LTable) findKey(key LValue) int {
	if len(tb.node) == 0 {
		return -1
	}
	i := tb.keyPos(key)
	for {
		n := &tb.node[i]
		if n.key == key {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// findNum is findKey of a number.
func (tb *LTable) findNum(f float64) int {
	if len(tb.node) == 0 {
		return -1
	}
	i := tb.numPos(f)
	for {
		n := &tb.node[i]
		if k, ok := n.key.(LNumber); ok && float64(k) == f {
			return i
		}
		if n.next == 0 {
			return -1
		}
		i = int(n.next) - 1
	}
}

// arrayIndex is a key's index in 1..2^maxBits when it is an integer
// there, else 0.
func arrayIndex(key LValue) int {
	if n, ok := key.(LNumber); ok {
		f := float64(n)
		if f >= 1 && f <= 1<<maxBits {
			if k := int(f); float64(k) == f {
				return k
			}
		}
	}
	return 0
}

// setNodeVector gives tb an empty hash part for size keys.
func (tb *LTable) setNodeVector(size int) {
	if size == 0 {
		tb.node = nil
		tb.setLastfree(0)
		return
	}
	lsize := ceilLog2(size)
	if lsize > maxBits {
		panic("table overflow")
	}
	tb.chargeGrowth(nodeBytes << lsize) // luarun: before it allocates (memory.go)
	tb.node = make([]tnode, 1<<lsize)
	tb.setLastfree(len(tb.node))
}

// setLastfree sets the bound getFreePos scans down from.
func (tb *LTable) setLastfree(n int) {
	tb.flags = tb.flags&^lastfreeMask | uint32(n)
}

// setArraySize grows or shrinks the array part to n slots, new ones LNil;
// a new array has room for minArrayCap slots at least.
func (tb *LTable) setArraySize(n int) {
	old := tb.array
	if n <= cap(old) {
		if n < len(old) {
			clear(old[n:])
		}
		arr := old[:n]
		fillNil(arr[min(len(old), n):])
		tb.array = arr
		return
	}
	c := n
	if c < minArrayCap {
		if cap(old) == 0 && len(tb.node) != 0 {
			// the first array of a table with a hash part (a record
			// given t[1]): the keys 1..n are few, more may never come
			c = max(c, minMixedArrayCap)
		} else {
			c = minArrayCap
		}
	}
	tb.chargeGrowth(chargeSize(c, valueBytes)) // luarun: before it allocates (memory.go)
	arr := make([]LValue, n, c)
	copy(arr, old)
	fillNil(arr[len(old):])
	tb.array = arr
}

// nilSlots is LNil in every slot, for fillNil to copy.
var nilSlots = func() (a [64]LValue) {
	for i := range a {
		a[i] = LNil
	}
	return
}()

// fillNil sets every slot of a to LNil (copied in blocks: one write
// barrier check per block).
func fillNil(a []LValue) {
	for len(a) > 0 {
		a = a[copy(a, nilSlots[:]):]
	}
}

// setArray sets the array part's slot i to v, keeping tb.border known
// where it stays so.
func (tb *LTable) setArray(i int, v LValue) {
	tb.array[i] = v
	b := int(tb.border)
	if b < 0 {
		return
	}
	if v == LNil {
		if i < b {
			if i == b-1 {
				tb.border--
			} else {
				tb.border = -1
			}
		}
	} else if i >= b {
		if i == b {
			tb.border++
		} else {
			tb.border = -1
		}
	}
}

// findBorder sets tb.border from the array part (after a resize), whose
// slots before from are known to be in use.
func (tb *LTable) findBorder(from int) {
	a := tb.array
	b := max(from, 0)
	for b < len(a) && a[b] != LNil {
		b++
	}
	for i := b; i < len(a); i++ {
		if a[i] != LNil {
			tb.border = -1
			return
		}
	}
	tb.border = int32(b)
}

// getFreePos returns a never used node, scanning down from lastfree, or
// -1 when there is none left.
func (tb *LTable) getFreePos() int {
	lf := int(tb.flags & lastfreeMask)
	for lf > 0 {
		lf--
		if tb.node[lf].key == nil {
			tb.setLastfree(lf)
			return lf
		}
	}
	tb.setLastfree(0)
	return -1
}

// isFull reports whether a new key whose main position is mp would make
// newKey rehash: mp is taken and getFreePos would find no free node.
func (tb *LTable) isFull(mp int) bool {
	if v := tb.node[mp].val; v == nil || v == LNil {
		return false
	}
	for lf := int(tb.flags & lastfreeMask); lf > 0; {
		lf--
		if tb.node[lf].key == nil {
			return false
		}
	}
	return true
}

// newKey inserts a key tb does not have, with its value (luaH_newkey).
// When the hash part is full the table is rehashed and the key set again
// (it may go to the array part then).
func (tb *LTable) newKey(key LValue, h uint32, value LValue) {
	if len(tb.node) == 0 {
		if len(tb.array) == 0 && arrayIndex(key) == 0 {
			// the first key of an empty table, not an array index: the
			// rehash would count nothing and make one node (with room
			// for a second: the old table's first slice, or {}'s own)
			if cap(tb.node) >= 2 {
				tb.node = tb.node[:1]
			} else {
				tb.node = make([]tnode, 1, 2)
			}
			tb.setLastfree(1)
			tb.node[0] = tnode{key: key, val: value, hash: h}
			return
		}
		tb.rehash(key)
		tb.setAgain(key, h, value)
		return
	}
	var mp int
	if _, ok := key.(LString); ok {
		mp = int(h & uint32(len(tb.node)-1))
	} else {
		mp = tb.keyPos(key)
	}
	if v := tb.node[mp].val; v != nil && v != LNil { // main position taken
		if len(tb.node) == 1 && cap(tb.node) >= 2 && tb.grow2(key, h, value) {
			return
		}
		f := tb.getFreePos()
		if f < 0 {
			tb.rehash(key)
			tb.setAgain(key, h, value)
			return
		}
		other := tb.nodePos(&tb.node[mp])
		if other != mp {
			// the colliding key is out of its main position: move it to
			// the free node and take its place
			for int(tb.node[other].next)-1 != mp {
				other = int(tb.node[other].next) - 1
			}
			tb.node[other].next = int32(f + 1)
			tb.node[f] = tb.node[mp]
			tb.node[mp].next = 0
		} else {
			// the new key goes to the free node, chained after mp
			tb.node[f].next = tb.node[mp].next
			tb.node[mp].next = int32(f + 1)
			mp = f
		}
	}
	n := &tb.node[mp]
	n.key, n.val, n.hash = key, value, h
}

// grow2 is newKey's rehash of a hash part of one node, in use, that has
// room for two, when neither its key nor the new one is an array index
// and the array part is empty: 5.1's rehash would make two nodes, set the
// old key at its main position and the new key at its own, or, when that
// is the same, at the other node (the free node getfreepos finds),
// chained after it. It places them so, without counting, and reports
// whether it did.
func (tb *LTable) grow2(key LValue, h uint32, value LValue) bool {
	old := tb.node[0]
	if len(tb.array) != 0 || arrayIndex(key) != 0 || arrayIndex(old.key) != 0 {
		return false
	}
	tb.node = tb.node[:2]
	ma := tb.nodePos(&old)
	var mb int
	if _, ok := key.(LString); ok {
		mb = int(h & 1)
	} else {
		mb = tb.keyPos(key)
	}
	old.next = 0
	tb.node[ma] = old
	nb := &tb.node[1-ma]
	*nb = tnode{key: key, val: value, hash: h}
	if mb == ma {
		tb.node[ma].next = int32(1 - ma + 1)
		tb.setLastfree(1 - ma)
	} else {
		tb.setLastfree(2)
	}
	return true
}

// setAgain sets a key after a rehash (luaH_set): an integer key may go to
// the array part now. h is a string key's hash.
func (tb *LTable) setAgain(key LValue, h uint32, value LValue) {
	if _, ok := key.(LString); ok {
		tb.newKey(key, h, value) // not in tb: the caller looked
	} else {
		tb.setKey(key, value)
	}
}

// rehash resizes the table for its keys and one more, ek (5.1's rehash):
// the array part becomes the largest power of two n with more than n/2
// of the keys 1..n in use, the hash part takes the other keys.
func (tb *LTable) rehash(ek LValue) {
	tb.rehashFor(arrayIndex(ek))
}

// rehashFor is rehash for an extra key whose array index is k (0: none).
func (tb *LTable) rehashFor(k int) {
	if len(tb.array) == 0 && k == 0 && len(tb.node) <= minNodeCap {
		// a small table of other keys (a record growing field by
		// field): unless one of its keys is an array index, the array
		// part stays empty and the hash part takes them all
		live := 0
		for i := range tb.node {
			n := &tb.node[i]
			if v := n.val; v != nil && v != LNil {
				if _, ok := n.key.(LString); !ok && arrayIndex(n.key) > 0 {
					live = -1
					break
				}
				live++
			}
		}
		if live >= 0 {
			tb.resize(0, live+1)
			return
		}
	}
	var nums [maxBits + 1]int // nums[i]: the keys in (2^(i-1), 2^i]
	nasize := tb.numUseArray(&nums)
	total := nasize
	for i := range tb.node {
		n := &tb.node[i]
		if v := n.val; v != nil && v != LNil {
			if k := arrayIndex(n.key); k > 0 {
				nums[ceilLog2(k)]++
				nasize++
			}
			total++
		}
	}
	if k > 0 && k <= 1<<maxBits {
		nums[ceilLog2(k)]++
		nasize++
	}
	total++
	na := computeSizes(&nums, &nasize)
	tb.resize(nasize, total-na)
}

// numUseArray counts the array part's keys in use into nums by slices of
// powers of two, and returns their number.
func (tb *LTable) numUseArray(nums *[maxBits + 1]int) int {
	if b := int(tb.border); b >= 0 {
		// the slots 1..b: no need to look at them
		ause := 0
		for lg, ttlg := 0, 1; lg <= maxBits && ause < b; lg, ttlg = lg+1, ttlg*2 {
			lim := ttlg
			if lim > b {
				lim = b
			}
			nums[lg] += lim - ause
			ause = lim
		}
		return ause
	}
	ause := 0
	i := 1
	for lg, ttlg := 0, 1; lg <= maxBits; lg, ttlg = lg+1, ttlg*2 {
		lc := 0
		lim := ttlg
		if lim > len(tb.array) {
			lim = len(tb.array)
			if i > lim {
				break
			}
		}
		for ; i <= lim; i++ {
			if tb.array[i-1] != LNil {
				lc++
			}
		}
		nums[lg] += lc
		ause += lc
	}
	return ause
}

// computeSizes returns the number of integer keys that go to the array
// part, and sets *narray to its size.
func computeSizes(nums *[maxBits + 1]int, narray *int) int {
	a := 0  // keys up to 2^i
	na := 0 // keys that go to the array part
	n := 0  // the array part's size
	for i, twotoi := 0, 1; twotoi/2 < *narray; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n = twotoi
				na = a
			}
		}
		if a == *narray {
			break
		}
	}
	*narray = n
	return na
}

// resize gives tb an array part of nasize slots and a hash part for
// nhsize keys, moving the keys to where they now go (5.1's resize: the
// array part's vanishing slots first, then the old nodes from the last).
func (tb *LTable) resize(nasize, nhsize int) {
	oldasize := len(tb.array)
	oldnode := tb.node
	if nasize > oldasize {
		tb.setArraySize(nasize)
	}
	if nhsize > 0 && len(oldnode) <= minNodeCap && 1<<ceilLog2(nhsize) <= cap(oldnode) {
		// a small hash part grows in its own memory
		tb.resizeSmall(nasize, oldasize, nhsize)
		return
	}
	if len(oldnode) == 0 && nhsize > 0 && nhsize < minNodeCap {
		// the first keys of a table made empty: room to grow to
		// minNodeCap keys without another allocation
		tb.chargeGrowth(nodeBytes * minNodeCap) // luarun: before it allocates (memory.go)
		tb.node = make([]tnode, 1<<ceilLog2(nhsize), minNodeCap)
		tb.setLastfree(len(tb.node))
	} else {
		tb.setNodeVector(nhsize)
	}
	tb.moveKeys(nasize, oldasize, oldnode)
	if cap(oldnode) <= minNodeCap {
		// luarun: the old nodes may be in the table's own allocation
		// (tableNodes1..4, {}'s two): they must not keep their keys and
		// values alive (a weak table's entries among them survived
		// collectgarbage)
		clear(oldnode[:cap(oldnode)])
	}
}

// moveKeys ends a resize: the keys of the array part's old slots past
// nasize, then those of oldnode, go where they now go.
func (tb *LTable) moveKeys(nasize, oldasize int, oldnode []tnode) {
	if nasize < oldasize {
		old := tb.array
		tb.array = old[:nasize]
		tb.border = -1
		for i := nasize; i < oldasize; i++ {
			if v := old[i]; v != LNil {
				tb.setKey(LNumber(i+1), v)
			}
		}
		clear(old[nasize:oldasize])
		if nasize == 0 {
			tb.array = nil
		}
	}
	from := int(tb.border) // the slots before it are in use still
	if from > len(tb.array) {
		from = len(tb.array)
	}
	tb.border = -1 // the old nodes' integer keys may go to the array part
	for i := len(oldnode) - 1; i >= 0; i-- {
		n := &oldnode[i]
		if v := n.val; v != nil && v != LNil {
			if _, ok := n.key.(LString); ok {
				tb.newKey(n.key, n.hash, v)
			} else {
				tb.setKey(n.key, v)
			}
		}
	}
	tb.findBorder(from)
}

// resizeSmall is resize of a hash part of up to minNodeCap nodes whose
// memory has room for nhsize keys: the old nodes wait in buf.
func (tb *LTable) resizeSmall(nasize, oldasize, nhsize int) {
	var buf [minNodeCap]tnode
	oldnode := buf[:copy(buf[:], tb.node)]
	tb.node = tb.node[:1<<ceilLog2(nhsize)]
	clear(tb.node[:cap(tb.node)]) // luarun: a shrunk part's tail too (see resize)
	tb.setLastfree(len(tb.node))
	tb.moveKeys(nasize, oldasize, oldnode)
}

// setListSize readies tb for OP_SETLIST's keys up to last: 5.1 grows the
// array part to last at once (luaH_resizearray), before it sets them.
func (tb *LTable) setListSize(last int) {
	if last > len(tb.array) {
		tb.materialize()
		tb.resize(last, len(tb.node))
	}
}

// Len returns length of this LTable without using __len: a border, as
// 5.1's luaH_getn finds it.
func (tb *LTable) Len() int {
	if tb.isView() {
		tb.materialize()
	}
	j := len(tb.array)
	if b := int(tb.border); b >= 0 {
		// the slots in use are the first b: luaH_getn's binary search
		// would find b, the only border in the array part
		if b < j || len(tb.node) == 0 {
			return b
		}
		return tb.unboundSearch(j)
	}
	if j > 0 && tb.array[j-1] == LNil {
		// a border in the array part: binary search
		i := 0
		for j-i > 1 {
			m := int(uint(i+j) / 2)
			if tb.array[m-1] == LNil {
				j = m
			} else {
				i = m
			}
		}
		return i
	}
	if len(tb.node) == 0 {
		return j
	}
	return tb.unboundSearch(j)
}

// unboundSearch finds a border past the array part (j slots, all in use).
func (tb *LTable) unboundSearch(j int) int {
	i := j // 0 or a key in use
	j++
	for tb.getInt(j) != LNil {
		i = j
		j *= 2
		if j > math.MaxInt32 {
			// a table built to defeat this: linear search
			i = 1
			for tb.getInt(i) != LNil {
				i++
			}
			return i - 1
		}
	}
	for j-i > 1 {
		m := (i + j) / 2
		if tb.getInt(m) == LNil {
			j = m
		} else {
			i = m
		}
	}
	return i
}

// getInt is the value of integer key k in tb itself.
func (tb *LTable) getInt(k int) LValue {
	if uint(k-1) < uint(len(tb.array)) {
		return tb.array[k-1]
	}
	if i := tb.findNum(float64(k)); i >= 0 {
		return tb.node[i].val
	}
	return LNil
}

// Append appends a given LValue to this LTable: t[#t+1] = value.
func (tb *LTable) Append(value LValue) {
	if value == LNil {
		return
	}
	tb.RawSetInt(tb.Len()+1, value)
}

// Insert inserts a given LValue at position `i` in this table, moving up
// the elements from i to #t (table.insert(t, i, v) in 5.1).
func (tb *LTable) Insert(i int, value LValue) {
	e := tb.Len() + 1
	if i > e {
		e = i
	}
	for k := e; k > i; k-- {
		tb.RawSetInt(k, tb.RawGetInt(k-1))
	}
	tb.RawSetInt(i, value)
}

// MaxN returns the largest positive number key (table.maxn), truncated
// to an integer.
func (tb *LTable) MaxN() int {
	tb.materialize()
	max := 0.0
	for i := len(tb.array) - 1; i >= 0; i-- {
		if tb.array[i] != LNil {
			max = float64(i + 1)
			break
		}
	}
	for i := range tb.node {
		n := &tb.node[i]
		if v := n.val; v != nil && v != LNil {
			if k, ok := n.key.(LNumber); ok && float64(k) > max {
				max = float64(k)
			}
		}
	}
	if max > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(max)
}

// Remove removes from this table the element at a given position, moving
// down the elements above it to #t, and returns it (table.remove in 5.1;
// a position below 1 is #t). Nothing is removed outside 1..#t.
func (tb *LTable) Remove(pos int) LValue {
	e := tb.Len()
	if pos < 1 {
		pos = e
	}
	if pos < 1 || pos > e {
		return LNil
	}
	oldval := tb.RawGetInt(pos)
	for ; pos < e; pos++ {
		tb.RawSetInt(pos, tb.RawGetInt(pos+1))
	}
	tb.RawSetInt(e, LNil)
	return oldval
}

// sortValues returns t[1..#t] for table.sort to sort in place: the array
// part itself when it holds them all, else a copy that sorted must then
// write back.
func (tb *LTable) sortValues() []LValue {
	n := tb.Len()
	if n <= len(tb.array) {
		tb.border = -1 // found again by sorted
		return tb.array[:n]
	}
	vals := make([]LValue, n)
	for i := range vals {
		vals[i] = tb.RawGetInt(i + 1)
	}
	return vals
}

// sorted writes back what sortValues returned, once sorted.
func (tb *LTable) sorted(vals []LValue) {
	if len(vals) == 0 || len(tb.array) >= len(vals) && &tb.array[0] == &vals[0] {
		tb.findBorder(0) // sorted in place
		return
	}
	for i, v := range vals {
		tb.RawSetInt(i+1, v)
	}
}

// RawSet sets a given LValue to a given index without the __newindex metamethod.
// It is recommended to use `RawSetString` or `RawSetInt` for performance
// if you already know the given LValue is a string or number.
func (tb *LTable) RawSet(key LValue, value LValue) {
	tb.beforeWrite(value)
	if s, ok := key.(LString); ok {
		tb.flags &^= flagFrozen
		tb.setStr(string(s), key, value)
		return
	}
	tb.setKey(key, value)
}

// setKey sets a key that is not a string (luaH_set).
func (tb *LTable) setKey(key LValue, value LValue) {
	switch k := key.(type) {
	case LNumber:
		f := float64(k)
		if f >= 1 && f <= float64(len(tb.array)) {
			if i := int(f); float64(i) == f {
				tb.setArray(i-1, value)
				return
			}
		}
		if f != f { // NaN: not a key
			return
		}
		if i := tb.findNum(f); i >= 0 {
			tb.node[i].val = value
			return
		}
		if i := int(f); float64(i) == f && i == len(tb.array)+1 && tb.appendSlot(i) {
			tb.setArray(i-1, value)
			return
		}
	case LString:
		tb.setStr(string(k), key, value)
		return
	case nil, *LNilType:
		return
	default:
		i, dead := tb.findObj(key)
		if i >= 0 {
			tb.node[i].val = value
			if value == LNil {
				tb.node[i].kill() // luarun: weak.go
			}
			return
		}
		if dead >= 0 {
			// removed, then set again: its node, as 5.1 finds it there
			if value != LNil {
				n := &tb.node[dead]
				n.key, n.val, n.hash = key, value, 0
			}
			return
		}
		if value == LNil {
			// 5.1 makes a node for the key (luaH_set), which dies
			tb.newKey(key, 0, value)
			if i := tb.findKey(key); i >= 0 {
				tb.node[i].kill()
			}
			return
		}
	}
	tb.newKey(key, 0, value)
}

// appendSlot readies the array part for key k = len(array)+1, a new key,
// when the table is a list (its array part's slots all in use, no hash
// part): the rehash 5.1 makes then grows the array part to the next power
// of two, which this does without counting the keys. It reports whether
// it did.
func (tb *LTable) appendSlot(k int) bool {
	if len(tb.node) != 0 || int(tb.border) != len(tb.array) || k > 1<<maxBits {
		return false
	}
	tb.setArraySize(1 << ceilLog2(k))
	return true
}

// setStr sets a string key; boxed is its box, or nil when the caller has
// none (the key is boxed if it is new).
func (tb *LTable) setStr(key string, boxed LValue, value LValue) {
	if i := tb.findStr(key); i >= 0 {
		tb.node[i].val = value
		return
	}
	h := strHash(key)
	if boxed == nil {
		boxed = boxKey(key, h)
	}
	tb.newKey(boxed, h, value)
}

// setStrH is setStr of a key whose strHash is h.
func (tb *LTable) setStrH(key string, h uint32, boxed LValue, value LValue) {
	if i := tb.findStrH(key, h); i >= 0 {
		tb.node[i].val = value
		return
	}
	if boxed == nil {
		boxed = boxKey(key, h)
	}
	tb.newKey(boxed, h, value)
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	tb.beforeWrite(value)
	if uint(key-1) < uint(len(tb.array)) {
		tb.setArray(key-1, value)
		return
	}
	if len(tb.node) == 0 {
		if key == len(tb.array)+1 && tb.appendSlot(key) {
			tb.setArray(key-1, value)
			return
		}
		// no room: rehash first (an array grows here), boxing no key
		tb.rehashFor(key)
		tb.setInt(key, value)
		return
	}
	tb.setInt(key, value)
}

// setInt is RawSetInt past the array part, or after a rehash.
func (tb *LTable) setInt(key int, value LValue) {
	if uint(key-1) < uint(len(tb.array)) {
		tb.setArray(key-1, value)
		return
	}
	if i := tb.findNum(float64(key)); i >= 0 {
		tb.node[i].val = value
		return
	}
	if tb.isFull(tb.numPos(float64(key))) {
		// newKey would rehash: do it before boxing the key, which may
		// go to the array part
		tb.rehashFor(key)
		tb.setInt(key, value)
		return
	}
	tb.newKey(LNumber(key), 0, value)
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	tb.beforeWrite(value)
	tb.flags &^= flagFrozen
	tb.setStr(key, nil, value)
}

// rawSetStringK is RawSetString with the key's hash and box (a
// constant's).
func (tb *LTable) rawSetStringK(key string, h uint32, boxed LValue, value LValue) {
	tb.beforeWrite(value)
	tb.flags &^= flagFrozen
	tb.setStrH(key, h, boxed, value)
}

// setExistingString sets key's value when tb itself has it with a value
// (not through a view's base), and reports whether it did: a field
// assignment's common case, in one lookup.
func (tb *LTable) setExistingString(key string, h uint32, value LValue) bool {
	if tb.flags&flagShared != 0 || value == LNil {
		return false
	}
	i := tb.findStrH(key, h)
	if i < 0 || tb.node[i].val == LNil {
		return false
	}
	tb.node[i].val = value
	tb.flags &^= flagFrozen
	return true
}

// setStrExisting sets key, whose strHash is h, in a table neither shared
// nor a view, when the key has a value there — or, if absent is true,
// also when it has none; it reports whether it did.
func (tb *LTable) setStrExisting(key string, h uint32, boxed LValue, value LValue, absent bool) bool {
	i := tb.findStrH(key, h)
	if i >= 0 && (absent || tb.node[i].val != LNil) {
		tb.node[i].val = value
		tb.flags &^= flagFrozen
		return true
	}
	if !absent {
		return false
	}
	tb.flags &^= flagFrozen
	if boxed == nil {
		boxed = boxKey(key, h)
	}
	tb.newKey(boxed, h, value)
	return true
}

// The hashes of the metamethods' names the VM looks up most.
var (
	hashIndex    = strHash("__index")
	hashNewindex = strHash("__newindex")
)

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	tb.RawSet(key, value)
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	switch k := key.(type) {
	case LString:
		return tb.RawGetString(string(k))
	case LNumber:
		f := float64(k)
		if f >= 1 && f <= float64(len(tb.array)) {
			if i := int(f); float64(i) == f {
				if v := tb.array[i-1]; v != LNil || !tb.isView() {
					return v
				}
				return tb.cowGet(key)
			}
		}
		if i := tb.findNum(f); i >= 0 {
			if v := tb.node[i].val; v != LNil || !tb.isView() {
				return v
			}
		}
	case nil, *LNilType:
		return LNil
	default:
		if i := tb.findKey(key); i >= 0 {
			if v := tb.node[i].val; v != LNil || !tb.isView() {
				return v
			}
		}
	}
	if tb.isView() {
		return tb.cowGet(key)
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	if uint(key-1) < uint(len(tb.array)) {
		if v := tb.array[key-1]; v != LNil || !tb.isView() {
			return v
		}
	} else if i := tb.findNum(float64(key)); i >= 0 {
		if v := tb.node[i].val; v != LNil || !tb.isView() {
			return v
		}
	}
	if tb.isView() {
		return tb.cowGet(LNumber(key))
	}
	return LNil
}

// RawGetH returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	return tb.RawGet(key)
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	if len(key) <= 8 || tb.isView() {
		// a short key: hashed faster than the small hash part is
		// scanned; a view's miss searches its base with the same hash
		return tb.rawGetStringH(key, strHash(key))
	}
	if i := tb.findStr(key); i >= 0 {
		return tb.node[i].val
	}
	return LNil
}

// rawGetStringH is RawGetString of a key whose strHash is h.
func (tb *LTable) rawGetStringH(key string, h uint32) LValue {
	if i := tb.findStrH(key, h); i >= 0 {
		if v := tb.node[i].val; v != LNil || !tb.isView() {
			return v
		}
	}
	if tb.isView() {
		return tb.cowGetStringH(key, h)
	}
	return LNil
}

// ForEach iterates over this table of elements, yielding each in turn to
// a given function, in the order of Next. It writes nothing (a shared
// table may be walked by many goroutines at once); keys that cb adds may
// or may not be visited.
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	tb.materialize()
	array, node := tb.array, tb.node
	for i := 0; i < len(array); i++ {
		if v := array[i]; v != LNil && v != nil {
			cb(LNumber(i+1), v)
		}
	}
	for i := range node {
		n := &node[i]
		if v := n.val; v != nil && v != LNil {
			cb(n.key, v)
		}
	}
}

// This function is equivalent to lua_next ( http://www.lua.org/manual/5.1/manual.html#lua_next ).
//
// luarun: luaH_next: the array part, then the nodes in index order. A key
// that is not in the table ends the traversal (5.1 raises "invalid key to
// 'next'"). Next writes nothing: the node's key is returned as it is.
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	tb.materialize()
	i := tb.findIndex(key)
	if i < -1 {
		return LNil, LNil
	}
	for i++; i < len(tb.array); i++ {
		if v := tb.array[i]; v != LNil {
			return LNumber(i + 1), v
		}
	}
	for i -= len(tb.array); i < len(tb.node); i++ {
		n := &tb.node[i]
		if v := n.val; v != nil && v != LNil {
			return n.key, v
		}
	}
	return LNil, LNil
}

// findIndex is the traversal index of key (findindex): -1 for nil, the
// array part's slots, then the nodes; -2 when key is not in the table.
func (tb *LTable) findIndex(key LValue) int {
	var i int
	switch k := key.(type) {
	case nil, *LNilType:
		return -1
	case LString:
		i = tb.findStr(string(k))
	case LNumber:
		f := float64(k)
		if f >= 1 && f <= float64(len(tb.array)) {
			if j := int(f); float64(j) == f {
				return j - 1
			}
		}
		i = tb.findNum(f)
	default:
		if i = tb.findKey(key); i < 0 {
			i = tb.findDead(key) // luarun: removed during the traversal
		}
	}
	if i < 0 {
		return -2
	}
	return i + len(tb.array)
}

// beforeWrite readies tb for a write of value: a shared table is never
// written, and a view forgets its base before a key is removed (cow.go).
func (tb *LTable) beforeWrite(value LValue) {
	if tb.flags&flagShared != 0 {
		sharedWrite()
	}
	if value == LNil && tb.isView() {
		tb.materialize()
	}
}

// keyBoxes holds the boxes of string keys set by Go code (RawSetString,
// SetField: a library's "type", "id"...), found by their strHash, so that
// a table filled from Go does not box the same key again and again (the
// VM passes its constants' boxes). A slot holds the box's data word, the
// pointer to the string header an LString in an LValue is.
var keyBoxes [1024]atomic.Pointer[string]

// maxBoxedKey is the longest key keyBoxes keeps.
const maxBoxedKey = 32

// lstringTab is an LString LValue's type word.
var lstringTab = (*[2]unsafe.Pointer)(unsafe.Pointer(&[]LValue{LString("x")}[0]))[0]

// boxKey returns key as an LValue; h is its strHash.
func boxKey(key string, h uint32) LValue {
	if len(key) > maxBoxedKey {
		return LString(key)
	}
	slot := &keyBoxes[h&uint32(len(keyBoxes)-1)]
	if p := slot.Load(); p != nil && *p == key {
		var v LValue
		w := (*[2]unsafe.Pointer)(unsafe.Pointer(&v))
		w[0], w[1] = lstringTab, unsafe.Pointer(p)
		return v
	}
	v := LValue(LString(key))
	slot.Store((*string)((*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]))
	return v
}
