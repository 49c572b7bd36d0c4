package luaproc

// Boxed numbers. An LNumber is a float64, which Go boxes on the heap when
// it becomes an LValue; the integers command results use most (status
// codes, exit codes, counts) are boxed once.
//
// (Command results are built with CreateTable and RawSetString: since
// luarun's gopher-lua keeps a table's first string keys in a slice
// (lua/FORK.md), a record costs a table and a slice,
// with no per-key boxing; the mirror of LTable's fields that used to
// build them is gone.)

import lua "github.com/luarun/luarun/lua"

// smallNumbers are the LValues of the integers 0..1023, boxed once.
var smallNumbers = func() (ns [1024]lua.LValue) {
	for i := range ns {
		ns[i] = lua.LNumber(i)
	}
	return ns
}()

// integerValue is lua.LNumber(n) as an LValue, shared for small n.
func integerValue(n int64) lua.LValue {
	if n >= 0 && n < int64(len(smallNumbers)) {
		return smallNumbers[n]
	}
	return lua.LNumber(n)
}
