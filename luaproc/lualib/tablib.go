package lualib

// table.concat, written for long lists: one builder, no value pushed per
// item (gopher-lua's pushes every item on the value stack, which grows by
// a fixed step: quadratic, and "registry overflow" past a million).

import (
	"fmt"

	lua "github.com/luarun/luarun/lua"
)

// tabConcat is table.concat(t [, sep [, i [, j]]]).
func tabConcat(L *lua.LState) int {
	sep := ""
	if L.Get(2) != lua.LNil {
		sep = L.CheckString(2) // a number is a string here, as in 5.1
	}
	t := L.CheckTable(1)
	i := L.OptCInt(3, 1) // C ints, as 5.1's: math.huge is 0
	last := t.Len()
	if L.Get(4) != lua.LNil {
		last = L.CheckCInt(4)
	}
	b := builder{L: L}
	for ; i <= last; i++ {
		L.Tick() // a step of the interrupt budget: a kill stops a long concat
		switch v := t.RawGetInt(i).(type) {
		case lua.LString:
			b.WriteString(string(v))
		case lua.LNumber:
			b.WriteString(v.String())
		default:
			raise(L, fmt.Sprintf("invalid value (%s) at index %d in table for 'concat'", v.Type(), i))
		}
		if i < last {
			b.WriteString(sep)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}
