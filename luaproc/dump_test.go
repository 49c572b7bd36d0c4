package luaproc

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/payload"
)

// dumpChunk is string.dump's chunk of src compiled as a chunk named name.
func dumpChunk(t *testing.T, src, name string) string {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	fn, err := L.Load(strings.NewReader(src), name)
	require.NoError(t, err)
	return string(lua.Dump(fn.Proto))
}

// TestBinaryChunks: a script file, a required module and a loadstring in a
// process may be binary chunks (string.dump's), as in Lua 5.1; a corrupt
// one is an error that says so.
func TestBinaryChunks(t *testing.T) {
	dir := t.TempDir()
	mod := dumpChunk(t, "local M = {} function M.twice(x) return 2 * x end return M", "@bin.lua")
	main := dumpChunk(t, `
function main()
  local m = require("bin")
  local f = loadstring(string.dump(function(a) return m.twice(a) + 1 end))
  local ok, ferr = pcall(f, 1)
  local _, err = pcall(require, "broken")
  return m.twice(21), ok, ferr, err
end`, "@main.lua")
	writeFiles(t, dir, map[string]string{
		"main.luac":  "#!/usr/bin/env luarun\n" + main,
		"bin.lua":    mod,
		"broken.lua": mod[:len(mod)-3],
	})
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "main.luac"), "main")
	require.NoError(t, err)
	// f's upvalue m is a fresh nil one: its call fails, naming main.lua
	require.Len(t, res, 4)
	assert.Equal(t, payload.Payloads{int64(42), false}, res[:2])
	assert.Contains(t, res[2], "main.lua:4: attempt to index upvalue 'm' (a nil value)")
	assert.Contains(t, res[3], "unexpected end in precompiled chunk")

	_, err = Compile("bad.luac", "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "bad.luac: bad header (PUC Lua bytecode: luarun loads only chunks made by its own string.dump) in precompiled chunk", se.Error())
}
