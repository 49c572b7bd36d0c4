package lualib

import (
	"testing"

	lua "github.com/luarun/luarun/lua"
)

// BenchmarkMatch: string.match with three captures on a log line, per
// call, by luarun's library and by gopher-lua's own in the same run.
func BenchmarkMatch(b *testing.B) {
	const src = `
local line = "ts=1 svc=alpha path=/api/v3/items status=200 ms=42"
local match = string.match
return function(n)
  for i = 1, n do match(line, "svc=(%w+) path=(%S+) status=(%d+)") end
end`
	for _, side := range []struct {
		name    string
		install bool
	}{{"lualib", true}, {"gopher-lua", false}} {
		b.Run(side.name, func(b *testing.B) {
			L := lua.NewState()
			defer L.Close()
			if side.install {
				Install(L)
			}
			if err := L.DoString(src); err != nil {
				b.Fatal(err)
			}
			run := L.Get(-1)
			b.ReportAllocs()
			b.ResetTimer()
			if err := L.CallByParam(lua.P{Fn: run, Protect: true}, lua.LNumber(b.N)); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkMatchBacktrack: a match that backtracks (every step a call of
// the matcher's match, each a step of the interrupt budget), per call,
// by luarun's library and by gopher-lua's.
func BenchmarkMatchBacktrack(b *testing.B) {
	const src = `
local s, p = ("a"):rep(40) .. "b", ("a?"):rep(8) .. ("a"):rep(8) .. "b"
local find = string.find
return function(n)
  for i = 1, n do find(s, p) end
end`
	for _, side := range []struct {
		name    string
		install bool
	}{{"lualib", true}, {"gopher-lua", false}} {
		b.Run(side.name, func(b *testing.B) {
			L := lua.NewState()
			defer L.Close()
			if side.install {
				Install(L)
			}
			if err := L.DoString(src); err != nil {
				b.Fatal(err)
			}
			run := L.Get(-1)
			b.ReportAllocs()
			b.ResetTimer()
			if err := L.CallByParam(lua.P{Fn: run, Protect: true}, lua.LNumber(b.N)); err != nil {
				b.Fatal(err)
			}
		})
	}
}
