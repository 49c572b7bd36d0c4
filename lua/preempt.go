package lua

// Preemption: a coroutine made to yield between two instructions.
// (luarun's fork.)
//
// An embedder that runs many coroutines on few goroutines (luarun's
// scheduler) sometimes needs a running one to step aside although it
// called nothing that yields. Its Interrupt's Check answers a
// *Preemption: before the instruction it was about to run, the
// coroutine yields the Preemption's values (or, Marked, none, as
// YieldMarked does), and that instruction runs when it is resumed.
//
// Invariants:
//
//   - Only where a yield from a Go function could be: the check runs in
//     the coroutine's own VM loop (not one nested in a call from Go: a
//     metamethod, a comparator, a callback), with no such call pending
//     (nCcalls 0), and outside a debug hook. Elsewhere the Preemption is
//     ignored there and the flag stays set: Check is asked again before
//     the next instruction, and the coroutine yields at the first one
//     that can. A long Go function's Tick (interrupt.go) ignores it too:
//     a Check that records anything when it answers a Preemption must
//     answer it only in the VM loop (the current frame a Lua function's,
//     not a Go function's), or the preemption is lost.
//   - Nothing of the instruction has run: the program counter is put
//     back on it, and the registers, the frames and the stack's top are
//     as they were. So the resume pushes nothing onto the coroutine's
//     stack (the values a resumer passes are dropped: preempted), which
//     would otherwise sit above the top that a CALL or RETURN with a
//     variable count reads.
//   - The instruction's debug hook events are sent when it runs, after
//     the resume, not before the yield: once.

// opPreempted is the opcode interrupted answers for a preempted
// coroutine: the one entry of jumpTable past the real opcodes, which
// leaves the VM loop (so the loop has no second exit to test for).
const opPreempted = opCodeMax + 1

// A Preemption, returned by an Interrupt's Check, makes the coroutine
// running yield before its next instruction, where it can (see above).
type Preemption struct {
	// Values are what the coroutine yields to its resumer.
	Values []LValue
	// Marked: it yields no values and flags its yield instead, as
	// YieldMarked does (for a resumer that calls ResumeSuspendedFor).
	Marked bool
}

func (*Preemption) Error() string { return "preempted" }

// isPreemption reports whether err is a *Preemption.
func isPreemption(err error) bool {
	_, ok := err.(*Preemption)
	return ok
}

// canPreempt reports whether L, checking its interrupt in its own VM
// loop, may yield there: it is a coroutine (it has a resumer), in no
// call from Go, and not in its debug hook.
func (L *LState) canPreempt() bool {
	return L.Parent != nil && L.CanYield()
}

// preempt yields L before the instruction of frame cf it was about to
// run (cf.Pc has been advanced past it): L's resumer gets true and
// pre's values, as from a yield.
func preempt(L *LState, cf *callFrame, pre *Preemption) {
	cf.Pc--
	L.preempted = true
	parent := L.Parent
	L.G.CurrentThread = parent
	L.Parent = nil
	if pre.Marked {
		L.markedYield = true
	}
	if !L.wrapped {
		parent.Push(LTrue)
	}
	for _, v := range pre.Values {
		parent.Push(v)
	}
}

// Preempted reports whether L is suspended by a preemption: its resume
// passes it no values.
func (L *LState) Preempted() bool { return L.preempted }

// resumePreempted prepares a resume of th, which was preempted: the
// resumer's n values are not passed (popped from ls's stack, where they
// are the top n). It reports whether th was.
func (ls *LState) resumePreempted(th *LState, n int) bool {
	if !th.preempted {
		return false
	}
	th.preempted = false
	if n > 0 {
		ls.Pop(n)
	}
	return true
}
