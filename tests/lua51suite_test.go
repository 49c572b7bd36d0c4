package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lua51SuiteDir is the official Lua 5.1 test suite, as gopher-lua ships it.
const lua51SuiteDir = "../lua/_lua5.1-tests"

// TestLua51Suite runs every file of the official Lua 5.1 test suite that
// bare gopher-lua passes, with the luarun binary: each must end with
// status 0 and nothing on stderr but the watchdog's note of a long step
// (constructs.lua computes for seconds without blocking). api.lua,
// checktable.lua and code.lua need the C test library and end early, as
// they do under bare gopher-lua. strings.lua fails on bare gopher-lua and
// passes with luarun's string library. The rest (all, attrib, big, db,
// errors, gc, main, nextvar, verybig) fail on bare gopher-lua already.
func TestLua51Suite(t *testing.T) {
	for _, file := range []string{"pm.lua", "strings.lua", "sort.lua", "vararg.lua", "locals.lua", "math.lua",
		"files.lua", "literals.lua", "constructs.lua", "closure.lua", "calls.lua", "events.lua",
		"api.lua", "checktable.lua", "code.lua"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			r := runLuarunIn(t, lua51SuiteDir, nil, "", file)
			assert.Equal(t, 0, r.code, "%s: %s", file, r.stderr)
			for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if line != "" {
					assert.Contains(t, line, "without blocking", "%s wrote to stderr", file)
				}
			}
		})
	}
}

// TestModuloAsLua51: a % b is Lua 5.1's a - floor(a/b)*b for integers,
// fractions, negative and huge operands, zero and infinities (lua5.1
// prints nan as "nan" or "-nan", luarun as "NaN": compared as one), and
// math.mod is math.fmod, as in 5.1. Skipped without lua5.1 (.ci/run
// installs it).
func TestModuloAsLua51(t *testing.T) {
	src := `
local xs = {0, 1, -1, 2, -2, 3, -3, 7, -7, 0.5, -0.5, 2.5, -2.5, 5.75, 1e17, -1e17, 2^53, 2^60 + 7, 1/0, -1/0, 1e-300}
local out = {}
for _, a in ipairs(xs) do
  for _, b in ipairs(xs) do
    out[#out + 1] = string.format("%.17g %.17g %.17g", a % b, math.mod(a, b), math.fmod(a, b))
  end
end
print((table.concat(out, "\n"):gsub("%-?nan", "nan"):gsub("NaN", "nan")))
`
	sameAsLua51(t, "mod.lua", src)
}

// TestNumberConversionAsLua51: strings become numbers as in Lua 5.1 —
// tonumber with and without a base, arithmetic on a string, a numeric
// for over strings: decimal (never octal), exponents, 0x hex, inf/nan,
// white space around, and nothing of Go's syntax ("0b11", "1_0"). A
// negative string with a base is negative (tonumber("-10", 36) == -36, as
// the suite's math.lua asserts), where a 64-bit lua5.1 wraps it around
// 2^64: those are left out of the comparison. Skipped without lua5.1
// (.ci/run installs it).
func TestNumberConversionAsLua51(t *testing.T) {
	src := `
local function show(x)
  if type(x) ~= "number" then return tostring(x) end
  if x ~= x then return "nan" end
  if x == 1/0 then return "inf" elseif x == -1/0 then return "-inf" end
  return string.format("%.17g", x)
end
local strs = {"inf", "nan", "-0x10", "0x1p4", " 0x10 ", "1e", "1e+", ".5", "5.", "0x", "1_0", "0b11", "0o7", "010",
  "  12  ", "12a", "", " ", "1e400", "-", "+5", "0X1F", "\t7\n", "1e2", "-.5e-3", "0x7fffffff", "z", "Z1",
  "0x1FFFFFFFFFFFFFFFFFF", "0x1.8", "-0x1.8p1", "0x.8", "0xg"}
for _, s in ipairs(strs) do
  local ok, sum = pcall(function() return s + 0 end)
  local n = 0
  local forok = pcall(function() for i = 1, s do n = n + 1; if n == 3 then break end end end)
  local b16, b2, b36 = tonumber(s, 16), tonumber(s, 2), tonumber(s, 36)
  if s:find("^%s*%-") then b16, b2, b36 = "negative", "negative", "negative" end -- see below
  print(string.format("%q", s), show(tonumber(s)), show(b16), show(b2), show(b36),
    ok and show(sum) or "error", forok and n or "error")
end
print((pcall(tonumber, "1", 1)), (pcall(tonumber, "1", 37)))
`
	sameAsLua51(t, "num.lua", src)
}

// sameAsLua51 runs src, saved as name, with lua5.1 and with the luarun
// binary, and asserts that both print the same; it skips the test when
// lua5.1 is not installed (.ci/run installs it).
func sameAsLua51(t *testing.T, name, src string) {
	t.Helper()
	lua51, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("lua5.1 is not installed (apt-get install lua5.1)")
	}
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	want, err := exec.Command(lua51, path).Output()
	require.NoError(t, err)
	r := runLuarun(t, "", path)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, string(want), r.stdout)
}
