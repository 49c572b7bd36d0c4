package lua

// luarun: Go panics that are not Lua errors.
//
// gopher-lua turns any Go panic inside a call (a nil dereference in a Go
// function, an index out of range) into a Lua error: PCall returns it,
// a coroutine's resume answers it, and Lua's pcall catches it. A state
// made with Options.PropagateGoPanics lets such a panic go on up the Go
// stack instead, as a *GoPanic that keeps where it was raised: a Lua
// error (*ApiError, raised by error() or RaiseError) is still caught as
// before. luarun ends the process whose code panicked, since a panic may
// have left the state half-updated, and reports it as a bug.

import (
	"fmt"
	"runtime/debug"
)

// GoPanic is a Go panic raised inside a state with PropagateGoPanics,
// on its way up through the state's coroutines and protected calls.
type GoPanic struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack where it was recovered first
}

func (p *GoPanic) Error() string { return fmt.Sprintf("internal error: %v", p.Value) }

// escapingPanic returns rcv, recovered in ls, as the *GoPanic to panic
// with again, or nil when it is to be caught as a Lua error: a Lua
// error, or any panic in a state without PropagateGoPanics.
func (ls *LState) escapingPanic(rcv any) *GoPanic {
	if !ls.Options.PropagateGoPanics {
		return nil
	}
	switch v := rcv.(type) {
	case *ApiError:
		return nil
	case *GoPanic:
		return v
	}
	return &GoPanic{Value: rcv, Stack: debug.Stack()}
}
