package luaproc

// The Lua parts of luarun: the files of builtin/, embedded in the binary
// and compiled once per program. Each runs once per Runtime, in the
// template state (state.go), and hands back functions every process
// shares. Their source names start with builtinPrefix, which tracebacks
// leave out and error positions drop (unwhere): a frame of theirs names
// nothing in the user's script.

import (
	"embed"
	"strings"
	"sync"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/lua/parse"
)

//go:embed builtin/*.lua
var builtinFiles embed.FS

// builtinPrefix starts the source name of every built-in chunk.
const builtinPrefix = "luarun:"

// preludeName is prelude.lua's source name: boot, the function that calls
// a process's entry point, is defined there (see traceback).
const preludeName = builtinPrefix + "prelude"

var builtinProtos sync.Map // file name → func() *lua.FunctionProto

// builtinProto returns builtin/<name>.lua compiled, once per program.
func builtinProto(name string) *lua.FunctionProto {
	once, _ := builtinProtos.LoadOrStore(name, sync.OnceValue(func() *lua.FunctionProto {
		src, err := builtinFiles.ReadFile("builtin/" + name + ".lua")
		if err != nil {
			panic("luaproc: " + err.Error())
		}
		chunk, err := parse.Parse(strings.NewReader(string(src)), builtinPrefix+name)
		if err != nil {
			panic("luaproc: builtin/" + name + ".lua: " + err.Error())
		}
		proto, err := lua.Compile(chunk, builtinPrefix+name)
		if err != nil {
			panic("luaproc: builtin/" + name + ".lua: " + err.Error())
		}
		noArgTable(proto)
		markStandsForC(proto)
		return proto
	}))
	return once.(func() *lua.FunctionProto)()
}

// isBuiltin reports whether a function's source is one of builtin/'s.
func isBuiltin(source string) bool { return strings.HasPrefix(source, builtinPrefix) }

// markStandsForC marks proto and the functions defined in it as code
// that scripts see as C functions: their tail calls (pcall_step calling
// itself) are not lost levels of the script's stack (frameAt).
func markStandsForC(proto *lua.FunctionProto) {
	proto.StandsForC = true
	for _, p := range proto.FunctionPrototypes {
		markStandsForC(p)
	}
}
