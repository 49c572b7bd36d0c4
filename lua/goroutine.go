package lua

// The state bound to a goroutine, for ChargeTable (memory.go): a table's
// methods know no state, but the goroutine growing it runs one. The owner
// binds the state around each run of it (Bind/Unbind); a table that grows
// on that goroutine charges that state.
//
// Goroutines are told apart by their runtime g pointer (getg, in
// assembly on amd64 and arm64; elsewhere it is 0 and nothing is bound).
// bindings is a fixed open-addressed set keyed by it: a goroutine claims
// a slot the first time it binds and keeps it (a worker binds once per
// step, so a claim must cost no atomic read-modify-write); the runtime
// reuses the g of a goroutine that ended for a new one, which then finds
// the slot its g claimed. A goroutine that finds no slot free binds
// nothing. Only the goroutine whose g is in a slot writes its state;
// others read only its g.

import (
	"sync/atomic"
)

const (
	bindSlots = 4096 // a power of two
	bindProbe = 16   // slots tried from a g's hash
)

type binding struct {
	g atomic.Uintptr
	s atomic.Pointer[Global]
	_ [48]byte // one slot a cache line: workers bind at once
}

var bindings [bindSlots]binding

// bindSlot is the slot g claimed, claiming one if it has none; nil when
// none is free within bindProbe of its hash.
func bindSlot(g uintptr, claim bool) *binding {
	h := int((g >> 9) ^ (g >> 21))
	for i := 0; i < bindProbe; i++ {
		b := &bindings[(h+i)&(bindSlots-1)]
		switch b.g.Load() {
		case g:
			return b
		case 0:
			if claim && b.g.CompareAndSwap(0, g) {
				return b
			}
			if !claim {
				return nil
			}
		}
	}
	return nil
}

// Bind makes the tables the running goroutine grows, until Unbind, charge
// ls's state (ChargeTable). The owner calls it before it runs ls and
// Unbind with what it returned after, on the same goroutine (a step run
// inside another's gets the outer binding back).
func Bind(ls *LState) (prev *Global) {
	if g := getg(); g != 0 {
		if b := bindSlot(g, true); b != nil {
			return b.s.Swap(ls.G)
		}
	}
	return nil
}

// Unbind undoes Bind: prev is what Bind returned.
func Unbind(prev *Global) {
	if g := getg(); g != 0 {
		if b := bindSlot(g, false); b != nil {
			b.s.Store(prev)
		}
	}
}

// boundGlobal is the state bound to the running goroutine, or nil.
func boundGlobal() *Global {
	g := getg()
	if g == 0 {
		return nil
	}
	if b := bindSlot(g, false); b != nil {
		return b.s.Load()
	}
	return nil
}
