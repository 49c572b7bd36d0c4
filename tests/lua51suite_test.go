package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// lua51SuiteDir is the official Lua 5.1 test suite, as gopher-lua ships it.
const lua51SuiteDir = "../third_party/gopher-lua/_lua5.1-tests"

// TestLua51Suite runs the files of the official Lua 5.1 test suite that
// luarun passes with the luarun binary: each must end with status 0 and
// nothing on stderr but the watchdog's note of a long step (constructs.lua
// computes for seconds without blocking). Not run: attrib.lua (require
// with a search path of C loaders and directories luarun does not have),
// calls.lua (a chunk's source is "@name" for files and load's own name
// otherwise: luarun cannot tell them apart), events.lua
// (debug.setmetatable, which luarun leaves out: types' metatables are
// shared by every process).
func TestLua51Suite(t *testing.T) {
	for _, file := range []string{"pm.lua", "strings.lua", "sort.lua", "vararg.lua", "locals.lua", "math.lua",
		"files.lua", "literals.lua", "constructs.lua", "closure.lua"} {
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
