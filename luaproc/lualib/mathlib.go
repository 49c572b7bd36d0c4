package lualib

// math.random and math.randomseed with a generator per Lua state (per
// process in luarun): gopher-lua's use Go's global source, which
// math.randomseed cannot seed since Go 1.24, so a seeded script gave
// different numbers each run.

import (
	"math"
	"math/rand/v2"

	lua "github.com/luarun/luarun/lua"
)

// randomKey is the registry field holding a state's generator.
const randomKey = "luarun.random"

// generator returns L's generator, making one with a random seed if the
// state has none yet (Lua 5.1 starts from a fixed seed; processes started
// together would then all draw the same numbers).
func generator(L *lua.LState) *rand.Rand {
	if ud, ok := L.G.Registry().RawGetString(randomKey).(*lua.LUserData); ok {
		return ud.Value.(*rand.Rand)
	}
	return seed(L, rand.Uint64())
}

func seed(L *lua.LState, s uint64) *rand.Rand {
	r := rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
	L.G.Registry().RawSetString(randomKey, &lua.LUserData{Value: r})
	return r
}

// mathRandom is math.random([m [, n]]) with 5.1's arguments and errors.
func mathRandom(L *lua.LState) int {
	r := generator(L).Float64()
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckCInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckCInt(1), L.CheckCInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		raise(L, "wrong number of arguments")
	}
	return 1
}

// mathRandomseed is math.randomseed(x): the state's sequence starts anew
// from x, the same in every run.
func mathRandomseed(L *lua.LState) int {
	seed(L, uint64(int64(L.CheckNumber(1))))
	return 0
}

// Reset forgets what this package keeps in L's registry (the random
// generator, collectgarbage's tuning values), for a state handed to
// another process.
func Reset(L *lua.LState) {
	if reg := L.G.RegistryIfMade(); reg != nil {
		reg.RawSetString(randomKey, lua.LNil)
		reg.RawSetString(lua.GCStateKey, lua.LNil)
	}
}
