package lualib

// luarun's library functions that can run long check their state's
// interrupt (lua.LState.Tick): with the flag up they raise its error,
// though no VM instruction runs. Before they checked, each ran to its
// end (the matcher for minutes).

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/luarun/luarun/lua"
)

var errStopped = errors.New("stopped by the test")

func TestLongFunctionsCheckTheInterrupt(t *testing.T) {
	const hard = `local s, p = ("a"):rep(30), ("a*"):rep(30) .. "b"` // exponential backtracking
	cases := map[string]string{
		"find":      hard + `; fn, args = string.find, {s, p}`,
		"match":     hard + `; fn, args = string.match, {s, p}`,
		"gsub":      hard + `; fn, args = string.gsub, {s, p, "x"}`,
		"gmatch":    hard + `; fn, args = string.gmatch(s, p), {}`,
		"long scan": `fn, args = string.find, {("a"):rep(1e6), "a*b"}`,
		"balance":   `fn, args = string.find, {"(" .. ("x"):rep(1e6), "%b()"}`,
		"concat": `local t = {} for i = 1, 100000 do t[i] = "x" end
		           fn, args = table.concat, {t, ","}`,
		// more specs than a tick budget (4,096 steps): at least one check
		"format": `local t = {("%d"):rep(5000)} for i = 1, 5000 do t[i + 1] = i end
		           fn, args = string.format, t`,
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			L := lua.NewState()
			defer L.Close()
			Install(L)
			if err := L.DoString(setup); err != nil {
				t.Fatalf("setup: %v", err)
			}
			args := L.GetGlobal("args").(*lua.LTable)
			var vals []lua.LValue
			for i := 1; i <= args.Len(); i++ {
				vals = append(vals, args.RawGetInt(i))
			}
			in := &lua.Interrupt{Check: func(*lua.LState) error { return errStopped }}
			L.SetInterrupt(in)
			in.Flag.Store(1)
			err := L.CallByParam(lua.P{Fn: L.GetGlobal("fn"), Protect: true}, vals...)
			if err == nil || !strings.Contains(err.Error(), errStopped.Error()) {
				t.Fatalf("want the interrupt's error, got %v", err)
			}
		})
	}
}
