package lualib

// CheckOptions: the Lua side of optcheck, for the options tables read as
// Lua tables (http.serve's, process.receive{...}'s, supervisor specs).

import (
	"fmt"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/optcheck"
)

// CheckOptions fails with an *optcheck.UnknownError if t (nil: no
// options) has a key that is not one of known. A key that is not a
// string is named as Lua would index it ("[1]").
func CheckOptions(t *lua.LTable, known ...string) error {
	if t == nil {
		return nil
	}
	var keys []string
	unknown := false
	t.ForEach(func(k, _ lua.LValue) {
		name, ok := k.(lua.LString)
		s := string(name)
		if !ok {
			s = fmt.Sprintf("[%s]", optionKeyText(k))
		}
		keys = append(keys, s)
		unknown = unknown || !ok || !contains(known, s)
	})
	if !unknown {
		return nil
	}
	return optcheck.Keys(keys, known...)
}

func optionKeyText(k lua.LValue) string {
	if n, ok := k.(lua.LNumber); ok {
		return lua.LVAsString(n)
	}
	return k.Type().String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
