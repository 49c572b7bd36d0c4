package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// lua51SuiteDir is the official Lua 5.1 test suite, as gopher-lua ships it.
const lua51SuiteDir = "../third_party/gopher-lua/_lua5.1-tests"

// TestLua51Suite runs the files of the official Lua 5.1 test suite that
// luarun passes with the luarun binary: each must end with status 0 and
// nothing on stderr. (attrib, calls, closure, constructs, events and
// literals need the debug library, which luarun does not have yet.)
func TestLua51Suite(t *testing.T) {
	for _, file := range []string{"pm.lua", "strings.lua", "sort.lua", "vararg.lua", "locals.lua", "math.lua", "files.lua"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			r := runLuarunIn(t, lua51SuiteDir, nil, "", file)
			assert.Equal(t, 0, r.code, "%s: %s", file, r.stderr)
			assert.Empty(t, r.stderr)
		})
	}
}
