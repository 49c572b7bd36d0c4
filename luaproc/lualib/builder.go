package lualib

// builder is a strings.Builder whose growth is charged to a state before
// it allocates (lua/memory.go): gsub and table.concat build strings whose
// size a script controls, and a refused growth raises "not enough memory"
// before the allocation, not after.

import (
	"strings"

	lua "github.com/luarun/luarun/lua"
)

type builder struct {
	strings.Builder
	L *lua.LState
}

// need makes room for n more bytes, charging what strings.Builder's
// growth allocates (twice its capacity, plus n).
func (b *builder) need(n int) {
	if b.Cap()-b.Len() < n {
		b.L.Charge(2*b.Cap() + n)
		b.Grow(n)
	}
}

func (b *builder) WriteString(s string) {
	b.need(len(s))
	b.Builder.WriteString(s)
}

func (b *builder) WriteByte(c byte) error {
	b.need(1)
	return b.Builder.WriteByte(c)
}
