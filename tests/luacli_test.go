package tests

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunsItselfAsLua: a script rebuilds the interpreter's command line
// from arg's negative indices, as penlight's pl.app.lua() does, and runs
// luarun with lua's options through the shell: -e statements (in order,
// before the script), os.exit's status, -v, an error's status and
// message.
func TestRunsItselfAsLua(t *testing.T) {
	helper := writeScript(t, "helper.lua", `print("helper", x, ...)`)
	script := writeScript(t, "self.lua", `
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local cmd, i = {}, -1
while arg[i] do table.insert(cmd, 1, q(arg[i])) i = i - 1 end
cmd = table.concat(cmd, " ")
local function run(args)
  local f = io.popen(cmd .. " " .. args .. " 2>&1; echo status $?")
  local out = f:read("*a")
  f:close()
  io.write(out)
end
run("-e " .. q("x = 1") .. " -e " .. q("x = x + 1") .. " " .. q(...) .. " a")
run("-e " .. q("require('string'); os.exit(255)"))
run("-e " .. q("error('x')"))
run("-v -e " .. q("print(#arg, arg[0])"))
`)
	r := runLuarun(t, "", "--shutdown-timeout", "5s", script, helper)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^`+regexp.QuoteMeta("helper\t2\ta\nstatus 0\n"+
		"status 255\n"+
		"luarun: (command line):1: x\nstack traceback:\n\t[C]: in function 'error'\n\t(command line):1: in main chunk\n\t[C]: ?\nstatus 1\n")+
		`luarun \S+ \(Lua 5\.1\)\n0\tnil\nstatus 0\n$`, r.stdout)
}
