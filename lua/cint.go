package lua

// Lua 5.1's C library functions take their integer arguments through
// luaL_checkinteger (a C long: ptrdiff_t) or luaL_checkint (a C int). On
// x86-64, where lua5.1 is compared, the conversion from a double is
// cvttsd2si: a NaN or a number outside the long's range becomes its
// minimum, and a C int keeps the long's low 32 bits. So unpack(t, 1,
// math.huge) asks for nothing (the end is 0), string.sub(s, -math.huge)
// starts at 1, and string.rep(s, 2^32 + 1) repeats once. The built-ins
// that 5.1 writes in C convert as it does, with these functions, which
// also keeps a hostile number from reaching Go's int arithmetic.

import "math"

// cInteger is (ptrdiff_t)f on x86-64.
func cInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// cInt is (int)(ptrdiff_t)f on x86-64: luaL_checkint's conversion.
func cInt(f float64) int { return int(int32(cInteger(f))) }

// CheckCInteger is luaL_checkinteger: argument n as a C long.
func (ls *LState) CheckCInteger(n int) int64 { return cInteger(float64(ls.CheckNumber(n))) }

// OptCInteger is luaL_optinteger: argument n as a C long, d if absent.
func (ls *LState) OptCInteger(n int, d int64) int64 {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckCInteger(n)
}

// CheckCInt is luaL_checkint: argument n as a C int.
func (ls *LState) CheckCInt(n int) int { return cInt(float64(ls.CheckNumber(n))) }

// OptCInt is luaL_optint: argument n as a C int, d if absent.
func (ls *LState) OptCInt(n int, d int) int {
	if ls.Get(n) == LNil {
		return d
	}
	return ls.CheckCInt(n)
}

// stackRoom is how many more values the state's stack can take: what
// lua_checkstack asks (5.1's C stack stops at 8000 values; luarun's at
// the registry's maximum size).
func (ls *LState) stackRoom() int {
	return max(int(ls.reg.maxSize), cap(ls.reg.array)) - ls.reg.top
}
