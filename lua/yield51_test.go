package lua

// Yields that would return into Go code raise Lua 5.1's error instead of
// corrupting the coroutine (LState.nCcalls, value.go).

import (
	"strings"
	"testing"
)

// TestYieldAcrossGoCallAs51: coroutine.yield inside a metamethod, a sort
// comparator, a gsub callback, a load reader or a pairs loop's body
// reached through __index raises "attempt to yield across
// metamethod/C-call boundary", which pcall catches; the coroutine is
// dead afterwards and the resumer goes on. Outputs are lua5.1's (except
// load, whose reader's errors 5.1 returns as nil, msg and gopher-lua
// raises; its own divergence; and coroutine.wrap's error, to which 5.1's
// auxwrap prepends the position of the call, as gopher-lua's wrap does
// not; gopher-lua's "can not resume a dead thread" is read as 5.1's
// words). Before the fix: "true true" (the value
// dropped), "register underflow", "can not yield from outside of a
// coroutine" and a nil-pointer panic.
func TestYieldAcrossGoCallAs51(t *testing.T) {
	const msg = "attempt to yield across metamethod/C-call boundary"
	cases := map[string]string{
		"index":  `local t = setmetatable({}, {__index = function() coroutine.yield(1) return 5 end}) return t.x`,
		"tostr":  `return tostring(setmetatable({}, {__tostring = function() coroutine.yield(1) return "s" end}))`,
		"add":    `return setmetatable({}, {__add = function() coroutine.yield(1) return 3 end}) + 1`,
		"eq":     `local mt = {__eq = function() coroutine.yield(1) return true end} return setmetatable({}, mt) == setmetatable({}, mt)`,
		"sort":   `local t = {3, 2, 1} table.sort(t, function(a, b) coroutine.yield(1) return a < b end) return t[1]`,
		"gsub":   `return (string.gsub("abc", "%w", function(c) coroutine.yield(1) return c end))`,
		"load":   `return load(function() coroutine.yield(1) end)`,
		"pairs":  `local t = setmetatable({}, {__index = function() coroutine.yield(1) end}) for _ in pairs({1}) do local _ = t.x end`,
		"pcall":  `return pcall(coroutine.yield, 1)`,
		"xpcall": `return xpcall(function() coroutine.yield(1) end, function(m) return m end)`,
	}
	for name, body := range cases {
		src := `
local co = coroutine.create(function() ` + body + ` end)
print(coroutine.resume(co))
print(coroutine.status(co), coroutine.resume(co))
print(pcall(function() local co = coroutine.wrap(function() ` + body + ` end) return co() end))`
		got := run51(t, src)
		var want string
		switch name {
		case "pcall":
			want = "true\tfalse\t" + msg + "\ndead\tfalse\tcannot resume dead coroutine\ntrue\tfalse\t" + msg + "\n"
		case "xpcall":
			want = "true\tfalse\t" + msg + "\ndead\tfalse\tcannot resume dead coroutine\ntrue\tfalse\t" + msg + "\n"
		default:
			want = "false\t" + msg + "\ndead\tfalse\tcannot resume dead coroutine\nfalse\t" + msg + "\n"
		}
		got = strings.ReplaceAll(got, "can not resume a dead thread", "cannot resume dead coroutine")
		if got != want {
			t.Errorf("%s:\n got: %q\nwant: %q", name, got, want)
		}
	}
}

// TestYieldAfterCaughtBoundaryError: an error caught by pcall inside a
// metamethod leaves the count of nested calls as it was: the coroutine
// can still yield from its own code afterwards.
func TestYieldAfterCaughtBoundaryError(t *testing.T) {
	got := run51(t, `
local t = setmetatable({}, {__index = function() error("inner") end})
local co = coroutine.create(function()
  for i = 1, 3 do
    local ok = pcall(function() return t.x end)
    coroutine.yield(ok)
  end
  return "end"
end)
for i = 1, 4 do print(coroutine.resume(co)) end`)
	want := "true\tfalse\ntrue\tfalse\ntrue\tfalse\ntrue\tend\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
