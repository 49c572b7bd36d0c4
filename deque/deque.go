// Package deque is a Chase-Lev work-stealing deque with batch stealing.
//
// One goroutine, the owner, pushes and pops at the bottom (LIFO). Any
// goroutine may steal from the top (FIFO), one item with Steal or up to
// MaxSteal items at once with StealHalfInto. The buffer is a power-of-two
// ring that the owner grows; it never shrinks.
//
// # Indices and who owns them
//
// Items live at unbounded uint32 indices (wrapping; all comparisons are
// differences read as int32, so a deque holds fewer than 2^30 items). The live
// items are [real, bottom).
//
//   - bottom is written only by the owner (PushBottom, PopBottom) and read by
//     thieves to size a steal.
//   - real only ever increases (claims and the owner's last-item CAS add to
//     it; nothing subtracts), which the proofs below rely on.
//   - head packs three fields into one word so that one CAS checks them all:
//     real (bits 0-31), the index of the oldest unclaimed item; stealing
//     (bit 32), set while a thief copies the items it claimed; and version
//     (bits 33-63), bumped by the owner when it pops without moving real.
//     Thieves write head (claim CAS, release And); the owner writes it
//     (CAS) only when few items are left.
//
// # Claim first, copy second
//
// A thief reads head and bottom, picks n (half the items, at most
// MaxSteal), and CASes head from (real, stealing=0) to (real+n, stealing=1).
// Only then does it read the n slots, and then it clears stealing. Because
// slots are read only after the claim, and rewritten by the owner only after
// it has seen the claim released, slots can be plain memory: no thief ever
// reads a slot the owner may be writing. While stealing is set, other thieves
// back off (they report nothing and the caller tries another victim).
//
// The owner may overwrite a slot only once no thief can still be reading it.
// It keeps floor, the real it last saw with stealing clear: every claim made
// before that moment has been released, and every claim after it starts at
// or above floor. A push that would overwrite index floor grows the ring,
// copying [floor, bottom), which includes any range a thief is still copying.
// When floor advances, the owner clears the slots below it (items that were
// stolen) so the deque holds no stale references. floor advances whenever
// the owner reads head with stealing clear: on every PopBottom, and in a
// push that finds the ring full (which first waits briefly for a thief
// mid-copy, so that a push-only owner does not grow the ring just because it
// looked while a thief was copying). Until then, slots of stolen items may
// keep their references.
//
// # The StealHalfInto trap and why this is correct
//
// A thief sizes its batch from a bottom it read earlier; the owner may have
// popped since. A plain Chase-Lev owner pops without a CAS whenever
// bottom > top, so such a thief can claim a slot the owner already took
// (under contention it duplicates some items and loses others; -race does
// not see it, since every access is atomic). Here:
//
//  1. Fast path. The owner stores bottom = i, then reads head (this
//     store-load order is what Go's sequentially consistent atomics give).
//     It takes slot i without a CAS only if i - real >= MaxSteal. A claim
//     covering i needs real' + n > i with n <= MaxSteal, so real' > real: that
//     thief read head after the owner did, hence bottom after the owner's
//     store, so it saw bottom <= i (or a later push that refilled slot i
//     with a new item, which is then the one it takes). Halving from a
//     bottom of at most i gives real' + ceil((i-real')/2) <= i: slot i is
//     never in its range.
//  2. Slow path (fewer than MaxSteal items below i). The owner stores
//     bottom = i, then CASes head to bump its version. A thief whose claim
//     CAS carries the old head fails (its bottom may be stale); one that reads
//     the new head reads bottom after the owner's store and, by the halving
//     bound above, cannot reach slot i. Claims that landed before the owner's
//     CAS are visible in the real it CASes from.
//  3. Last item (i == real). Owner and thieves race with a CAS on real
//     itself; exactly one wins.
//
// The version has 31 bits: a thief stalled between reading head and its CAS
// while the owner does exactly a multiple of 2^31 slow pops, with no steal in
// between, would defeat it. That is the usual bound of a tagged CAS.
//
// # Cost
//
// PushBottom is one plain store and one atomic store. PopBottom is an atomic
// store and a load with MaxSteal or more items, an atomic store and a CAS with
// fewer, and a CAS alone for the last item. A steal is a CAS and an atomic
// And. Nothing allocates except growth.
package deque

import (
	"runtime"
	"sync/atomic"
)

// MaxSteal is the largest batch StealHalfInto moves. It is also the owner's
// margin: PopBottom skips the CAS only while at least MaxSteal items remain
// below the one it takes.
const MaxSteal = 32

const (
	stealingBit = uint64(1) << 32
	versionOne  = uint64(1) << 33
	realMask    = uint64(1)<<32 - 1
	maxCapacity = 1 << 30
	minCapacity = 2
	// growPatience is how many times makeRoom re-reads head, waiting for a
	// thief to finish copying, before it grows the ring instead.
	growPatience = 64
)

type cacheLinePad [64]byte

// ring is a power-of-two buffer. Slots are plain: see "Claim first, copy
// second" in the package comment for why no slot is read and written at once.
type ring[T any] struct {
	mask  uint32
	slots []T
}

func newRing[T any](capacity int) *ring[T] {
	return &ring[T]{mask: uint32(capacity - 1), slots: make([]T, capacity)}
}

// Deque is a work-stealing deque. The zero value is not usable; call New.
type Deque[T any] struct {
	// head is real | stealing | version (see package comment).
	// Written by thieves (claim, release) and by the owner (slow-path CAS).
	head atomic.Uint64
	_    cacheLinePad

	// bottom is one past the newest item. Written by the owner, read by thieves.
	bottom atomic.Uint32
	// buf is the current ring. Written by the owner when it grows, read by
	// thieves after they claim.
	buf atomic.Pointer[ring[T]]

	// Owner-only fields.
	bot   uint32   // the owner's copy of bottom
	floor uint32   // real as last seen with stealing clear; slots below it are free
	rg    *ring[T] // the owner's copy of buf
	_     cacheLinePad
}

// New returns an empty deque whose ring starts with room for capacity items
// (rounded up to a power of two, at least 2). It grows as needed.
func New[T any](capacity int) *Deque[T] {
	c := minCapacity
	for c < capacity {
		c <<= 1
	}
	d := &Deque[T]{rg: newRing[T](c)}
	d.buf.Store(d.rg)
	return d
}

// Len reports the number of items. It is exact for the owner when no thief
// is active, and a snapshot otherwise.
func (d *Deque[T]) Len() int {
	r := uint32(d.head.Load())
	n := int32(d.bottom.Load() - r)
	if n < 0 {
		return 0
	}
	return int(n)
}

// PushBottom adds x at the bottom. Only the owner may call it.
func (d *Deque[T]) PushBottom(x T) {
	b := d.bot
	if b-d.floor >= uint32(len(d.rg.slots)) {
		d.makeRoom(b, 1)
	}
	d.rg.slots[b&d.rg.mask] = x
	d.bot = b + 1
	// Publishes the slot: a thief that reads this bottom reads the slot after.
	d.bottom.Store(b + 1)
}

// PopBottom removes and returns the newest item. Only the owner may call it.
// ok is false when the deque is empty.
func (d *Deque[T]) PopBottom() (x T, ok bool) {
	b := d.bot
	h := d.head.Load()
	d.seeHead(h)
	r := uint32(h)
	if b == r {
		return x, false // empty, and only the owner adds items
	}
	i := b - 1
	if i == r {
		return d.popLast(b, h)
	}
	// Two or more items. Publish the lower bottom before reading head again:
	// a thief that reads head after this load reads bottom after this store.
	d.bottom.Store(i)
	raceWindow()
	h = d.head.Load()
	for {
		d.seeHead(h)
		r = uint32(h)
		n := int32(i - r)
		switch {
		case n >= MaxSteal:
			return d.take(i, i), true
		case n > 0:
			raceWindow()
			// Invalidate every claim sized from a bottom read before our store.
			if d.head.CompareAndSwap(h, h+versionOne) {
				return d.take(i, i), true
			}
		case n == 0:
			// Thieves took all but slot i; race for it on real.
			if d.head.CompareAndSwap(h, withReal(h, r+1)) {
				d.bottom.Store(b)
				return d.take(i, b), true
			}
		default:
			// Thieves took everything, slot i included (real == b).
			d.bottom.Store(b)
			return x, false
		}
		h = d.head.Load()
	}
}

// popLast takes the only item, racing thieves with a CAS on real.
func (d *Deque[T]) popLast(b uint32, h uint64) (x T, ok bool) {
	i := b - 1
	for {
		if d.head.CompareAndSwap(h, withReal(h, b)) {
			// bottom stays b == real: empty.
			return d.take(i, b), true
		}
		h = d.head.Load()
		d.seeHead(h)
		if uint32(h) != i {
			return x, false // a thief took it
		}
	}
}

// take returns slot i, clears it, and records the owner's new bottom.
func (d *Deque[T]) take(i, newBot uint32) T {
	p := &d.rg.slots[i&d.rg.mask]
	x := *p
	var zero T
	*p = zero
	d.bot = newBot
	return x
}

// seeHead advances floor when no thief is copying, clearing the slots of
// items stolen since the last advance. Owner only.
func (d *Deque[T]) seeHead(h uint64) {
	if h&stealingBit != 0 {
		return
	}
	r := uint32(h)
	if r == d.floor {
		return
	}
	var zero T
	for f := d.floor; f != r; f++ {
		d.rg.slots[f&d.rg.mask] = zero
	}
	d.floor = r
}

// makeRoom ensures n more items fit above bottom b without overwriting a
// slot a thief may still read, growing the ring if needed. Owner only.
func (d *Deque[T]) makeRoom(b uint32, n uint32) {
	h := d.head.Load()
	// A thief mid-copy pins floor. Its copy is at most MaxSteal items, so
	// wait for it briefly rather than grow a ring that may be mostly free;
	// grow only if it is slow (descheduled, say).
	for spin := 0; h&stealingBit != 0 && spin < growPatience; spin++ {
		if spin >= growPatience/2 {
			runtime.Gosched()
		}
		h = d.head.Load()
	}
	d.seeHead(h)
	need := b - d.floor + n
	if need <= uint32(len(d.rg.slots)) {
		return
	}
	c := len(d.rg.slots)
	for uint32(c) < need {
		c <<= 1
	}
	if c > maxCapacity {
		panic("deque: more than 2^30 items")
	}
	old, nr := d.rg, newRing[T](c)
	for f := d.floor; f != b; f++ {
		nr.slots[f&nr.mask] = old.slots[f&old.mask]
	}
	d.rg = nr
	// Publish the copy before any bottom that covers items only it holds.
	d.buf.Store(nr)
}

// Steal removes and returns the oldest item. Any goroutine may call it.
// ok is false when the deque is empty or another thief is mid-steal (the
// caller should look elsewhere and come back).
func (d *Deque[T]) Steal() (x T, ok bool) {
	// claim(1), without the batch arithmetic.
	var r uint32
	for {
		h := d.head.Load()
		r = uint32(h)
		if h&stealingBit != 0 || int32(d.bottom.Load()-r) <= 0 {
			return x, false
		}
		raceWindow()
		if d.head.CompareAndSwap(h, withReal(h, r+1)|stealingBit) {
			break
		}
	}
	raceWindow()
	rg := d.buf.Load()
	x = rg.slots[r&rg.mask]
	raceWindow()
	d.release()
	return x, true
}

// StealHalfInto moves about half of d's items (rounded up, at most
// MaxSteal), oldest first, onto the bottom of dst, and returns how many it
// moved. The caller must be dst's owner, and dst must not be d. It moves
// nothing when d is empty or another thief is mid-steal.
func (d *Deque[T]) StealHalfInto(dst *Deque[T]) int {
	r, n := d.claim(MaxSteal)
	if n == 0 {
		return 0
	}
	raceWindow()
	src := d.buf.Load()
	b := dst.bot
	if b-dst.floor+n > uint32(len(dst.rg.slots)) {
		dst.makeRoom(b, n)
	}
	out := dst.rg
	for k := uint32(0); k < n; k++ {
		out.slots[(b+k)&out.mask] = src.slots[(r+k)&src.mask]
	}
	raceWindow()
	d.release()
	dst.bot = b + n
	dst.bottom.Store(b + n)
	return int(n)
}

// claim reserves the oldest min(ceil(len/2), max) items for the calling
// thief and sets stealing. It returns their first index and count (0 if
// there is nothing to take or another thief is copying).
func (d *Deque[T]) claim(max uint32) (r, n uint32) {
	for {
		h := d.head.Load()
		if h&stealingBit != 0 {
			return 0, 0
		}
		r = uint32(h)
		// bottom is read after head: see the package comment, case 1.
		avail := int32(d.bottom.Load() - r)
		if avail <= 0 {
			return 0, 0
		}
		n = uint32(avail+1) / 2
		if n > max {
			n = max
		}
		raceWindow()
		if d.head.CompareAndSwap(h, withReal(h, r+n)|stealingBit) {
			return r, n
		}
	}
}

// release ends a steal. The owner reuses the claimed slots only after it
// has seen this.
func (d *Deque[T]) release() {
	d.head.And(^stealingBit)
}

func withReal(h uint64, r uint32) uint64 {
	return h&^realMask | uint64(r)
}
