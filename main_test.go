package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// runCmd runs the command in this process with args after the command's
// name ("luarun") and stdin as standard input; it returns the status and
// what print and the command wrote. LUA_INIT is unset unless the test sets
// it.
func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if _, set := os.LookupEnv("LUA_INIT"); !set {
		t.Setenv("LUA_INIT", "")
	}
	var out, errb bytes.Buffer
	code = run(append([]string{"luarun"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeLua(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// printArgs prints arg from index -6 to #arg.
const printArgs = `local t = {} for i = -6, #arg do t[#t + 1] = i .. "=" .. tostring(arg[i]) end print(table.concat(t, " "))`

// TestArgAsLua: arg[0] is the script as named, arg[1..n] its arguments,
// and every word before it, the command's name first, a negative index,
// as lua.c makes arg; the script's ... are its arguments.
func TestArgAsLua(t *testing.T) {
	script := writeLua(t, "args.lua", printArgs+"\nprint(...)")
	code, out, errs := runCmd(t, "", "--sandbox", script, "a", "b")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "-6=nil -5=nil -4=nil -3=nil -2=luarun -1=--sandbox 0="+script+" 1=a 2=b\na\tb\n", out)

	code, out, errs = runCmd(t, "", "-w", "1", "-e", "x = 1", "--", script, "-v")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "-6=luarun -5=-w -4=1 -3=-e -2=x = 1 -1=-- 0="+script+" 1=-v\n-v\n", out)

	code, out, errs = runCmd(t, "print(arg[0], ...)", "-", "x")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "-\tx\n", out, "stdin: arg[0] is -, as in lua")
}

// TestArgOfSpawnedProcess: a spawned process's arg is its own (arg[0]
// its script, arg[1..n] its arguments), without the command line's.
// (child is not vararg: in a vararg function arg is 5.1's local.)
func TestArgOfSpawnedProcess(t *testing.T) {
	script := writeLua(t, "spawn.lua", `
function child(x) print(arg[-1], arg[0] ~= nil, arg[1], x) end
function main() process.wait(process.spawn("child", "c")) end`)
	code, out, errs := runCmd(t, "", "--quiet-crashes", script, "m")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "nil\ttrue\tc\tc\n", out)
}

// TestExecOption: -e runs its statement in the main process before the
// script, in order with -l, and the script sees what they did; without a
// script the statements are the program.
func TestExecOption(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mod.lua"), []byte(`print("mod loaded", x) y = 2 return {}`), 0o644))
	script := writeLua(t, "s.lua", `print("script", x, y, package.path:sub(1, 6))`)
	code, out, errs := runCmd(t, "", "-e", "x = 1", "-e", "package.path = [["+dir+"/?.lua;]] .. package.path", "-lmod", "-e", "print('e3', y)", script)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "mod loaded\t1\ne3\t2\nscript\t1\t2\t"+dir[:6]+"\n", out)

	code, out, errs = runCmd(t, "", "-e", "print(1)", "-e", "print(arg[0], arg[-1], arg[-5])")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "1\nnil\tprint(arg[0], arg[-1], arg[-5])\tluarun\n", out, "no script: every word is a negative index")

	code, out, errs = runCmd(t, "", "-e", "function main() print('main') end")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "", out, "no script: a global main the statements defined is not run")

	code, out, errs = runCmd(t, "", "-eprint(7)", "-l", "string", "-e", "print(8)")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "7\n8\n", out, "-e joined to its statement")
	// a script of definitions alone (not run per process): -e runs
	// before its definitions exist, and cannot hide them
	defs := writeLua(t, "defs.lua", `function main() print("script's main", x) end`)
	code, out, errs = runCmd(t, "", "-e", "print('before', main) x = 1 function main() print('-e main') end", defs)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "before\tnil\nscript's main\t1\n", out)
}

// TestExecOptionErrors: an error in -e is lua's: "luarun: (command
// line):1: msg" and a traceback on stderr, status 1, the script unrun; a
// statement that does not compile is also status 1, with lua5.1's
// message.
func TestExecOptionErrors(t *testing.T) {
	script := writeLua(t, "s.lua", `print("script ran")`)
	code, out, errs := runCmd(t, "", "-e", "error('x')", script)
	assert.Equal(t, 1, code)
	assert.Equal(t, "", out)
	assert.Equal(t, "luarun: (command line):1: x\nstack traceback:\n\t[C]: in function 'error'\n\t(command line):1: in main chunk\n\t[C]: ?\n", errs)

	code, out, errs = runCmd(t, "", "-e", "x =", script)
	assert.Equal(t, 1, code)
	assert.Equal(t, "", out)
	assert.Equal(t, "luarun: (command line):1: unexpected symbol near '<eof>'\n", errs)

	code, _, errs = runCmd(t, "", "-l", "no_such_module_xyz", script)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "module 'no_such_module_xyz' not found")

	code, _, errs = runCmd(t, "", "-e")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "luarun: -e needs an argument")
	code, _, errs = runCmd(t, "", "-i", script)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "no interactive mode")
}

// TestOsExitStatus: os.exit(n) in -e or the script exits n, as lua.
// TestErrorReportAsLua: the main chunk's failure is reported as lua.c's
// report does (outputs are lua5.1's): nothing for error(), "(error object
// is not a string)" without a traceback (and without __tostring) for a
// value that is neither a string nor a number; -e's chunk is
// "=(command line)".
func TestErrorReportAsLua(t *testing.T) {
	for src, want := range map[string]string{
		`error()`:     "",
		`error(true)`: "luarun: (error object is not a string)\n",
		`error(setmetatable({}, {__tostring = function() return "TS" end}))`: "luarun: (error object is not a string)\n",
	} {
		code, out, errs := runCmd(t, "", "-e", src)
		assert.Equal(t, 1, code, src)
		assert.Equal(t, "", out, src)
		assert.Equal(t, want, errs, src)
	}
	code, out, errs := runCmd(t, "", "-e", "error(42)")
	assert.Equal(t, 1, code)
	assert.Equal(t, "", out)
	assert.Equal(t, "luarun: (command line):1: 42\nstack traceback:\n\t[C]: in function 'error'\n\t(command line):1: in main chunk\n\t[C]: ?\n", errs)
	_, out, _ = runCmd(t, "", "-e", "local i = debug.getinfo(1, 'S') print(i.source, i.short_src)")
	assert.Equal(t, "=(command line)\t(command line)\n", out)
}

func TestOsExitStatus(t *testing.T) {
	code, out, errs := runCmd(t, "", "-e", "os.exit(255)", "-e", "print('not reached')")
	assert.Equal(t, 255, code, errs)
	assert.Equal(t, "", out)
	code, _, _ = runCmd(t, "", "-e", "os.exit(3)")
	assert.Equal(t, 3, code)
	code, _, _ = runCmd(t, "", "-e", "os.exit()")
	assert.Equal(t, 0, code)
	code, _, errs = runCmd(t, "", "-e", "error('boom')")
	assert.Equal(t, 1, code, errs)
}

// TestVersionOption: -v prints luarun's version line on stderr (as lua
// 5.1 does) and goes on; alone it exits 0. --version is urfave/cli's.
func TestVersionOption(t *testing.T) {
	code, out, errs := runCmd(t, "", "-v")
	assert.Equal(t, 0, code)
	assert.Equal(t, "", out)
	assert.Equal(t, "luarun "+buildVersion()+" (Lua 5.1)\n", errs)

	code, out, errs = runCmd(t, "", "-e", "print(1)", "-v")
	assert.Equal(t, 0, code)
	assert.Equal(t, "1\n", out)
	assert.Equal(t, versionLine()+"\n", errs)

	code, out, _ = runCmd(t, "", "--version")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "luarun version "), out)
}

// TestEntryFlag: -e is lua's now; --entry names the entry point.
func TestEntryFlag(t *testing.T) {
	script := writeLua(t, "e.lua", "function main() print('main') end\nfunction other() print('other') end\n")
	code, out, errs := runCmd(t, "", "--entry", "other", script)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "other\n", out)
	code, out, errs = runCmd(t, "", "-e", "print('stat')", script)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "stat\nmain\n", out)
}

// TestLuaInit: LUA_INIT runs first: a statement (chunk "LUA_INIT") or
// @file.
func TestLuaInit(t *testing.T) {
	t.Setenv("LUA_INIT", "x = 'init'")
	code, out, errs := runCmd(t, "", "-e", "print(x)")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "init\n", out)

	file := writeLua(t, "init.lua", "y = 'from file'")
	t.Setenv("LUA_INIT", "@"+file)
	code, out, errs = runCmd(t, "", "-e", "print(y)")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "from file\n", out)

	t.Setenv("LUA_INIT", "error('i')")
	code, out, errs = runCmd(t, "", "-e", "print(2)")
	assert.Equal(t, 1, code)
	assert.Equal(t, "", out)
	assert.True(t, strings.HasPrefix(errs, "luarun: LUA_INIT:1: i\n"), errs)
}

// TestParseCommandLine: luarun's flags (with their values) go to
// urfave/cli, lua's options are taken in order, the first other word is
// the script.
func TestParseCommandLine(t *testing.T) {
	flags := append(runFlags(), cli.HelpFlag, cli.VersionFlag)
	commands := []string{"check", "help", "h"}
	cases := []struct {
		args   []string
		flags  []string
		lua    []luaOption
		script string
		rest   []string
		before int // words before the script
	}{
		{[]string{"luarun", "-w", "4", "--sandbox", "x.lua", "-e", "a"}, []string{"-w", "4", "--sandbox"}, nil, "x.lua", []string{"-e", "a"}, 4},
		{[]string{"luarun", "-log-level", "debug", "-lfoo", "-e", "s", "-"}, []string{"-log-level", "debug"}, []luaOption{{true, "foo"}, {false, "s"}}, "-", []string{}, 6},
		{[]string{"luarun", "--timeout=1s", "--", "-x.lua", "a"}, []string{"--timeout=1s"}, nil, "-x.lua", []string{"a"}, 3},
		{[]string{"luarun", "-e", "s"}, nil, []luaOption{{false, "s"}}, "", nil, 3},
		{[]string{"luarun", "--bogus", "x.lua"}, []string{"--bogus"}, nil, "x.lua", []string{}, 2},
		{[]string{"luarun", "--entry", "w", "check", "x.lua"}, []string{"--entry", "w", "check", "x.lua"}, nil, "", nil, 0},
	}
	for _, c := range cases {
		cl, err := parseCommandLine(c.args, flags, commands)
		require.NoError(t, err, c.args)
		assert.Equal(t, c.flags, cl.flags, c.args)
		assert.Equal(t, c.lua, cl.lua, c.args)
		assert.Equal(t, c.script, cl.script, c.args)
		if c.script != "" {
			assert.Equal(t, c.rest, cl.scriptArgs, c.args)
		}
		if c.before > 0 {
			assert.Equal(t, c.args[:c.before], cl.before, c.args)
		}
	}
	_, err := parseCommandLine([]string{"luarun", "-l"}, flags, commands)
	assert.ErrorContains(t, err, "-l needs an argument")
}
