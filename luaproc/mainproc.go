package luaproc

import (
	"context"
	"sync"

	lua "github.com/luarun/luarun/lua"
)

// MainOptions are what the lua command line gives a program's main
// process beyond Start's arguments (the luarun command's LUA_INIT, -e, -l
// and its arguments before the script). Processes it spawns have none of
// them.
type MainOptions struct {
	// Before are chunks the process runs, in order and with no
	// arguments, in its own state before the script's chunk, as lua
	// runs LUA_INIT and its -e and -l options: what they set (globals,
	// package.path, modules loaded) the script sees. An error in one
	// ends the process, the script unrun.
	Before []*Script
	// Arg0 is arg[0]: the script as the command line named it; "" leaves
	// arg[0] out (no script: lua -e alone).
	Arg0 string
	// ArgBefore are the command line's words before the script, arg[-n]
	// to arg[-1]: ArgBefore[0], at the lowest index, is the command's own
	// name, as lua.c makes arg.
	ArgBefore []string
}

// StartMain is Start for a program's main process as the luarun command
// runs it: the global arg is lua.c's (MainOptions.Arg0, ArgBefore, then
// args at 1..n) and the Before chunks run first. s nil runs no script:
// the Before chunks alone (lua -e 'stat').
// ctx is the process's parent, as Start's.
func (rt *Runtime) StartMain(ctx context.Context, s *Script, entry string, mo MainOptions, args ...any) (Handle, error) {
	if s == nil {
		s = &Script{name: "(command line)", proto: noScriptProto()}
	}
	p := rt.newProcess(s)
	p.more().main = &mo
	h, err := rt.start(ctx, p, entry, args)
	return Handle{h}, err
}

// noScriptProto is the chunk of a main process without a script. It
// returns an empty module, so that no global main the -e statements
// defined is taken for an entry point (lua -e 'function main() end' runs
// nothing more).
var noScriptProto = sync.OnceValue(func() *lua.FunctionProto {
	s, err := Compile(builtinPrefix+"command-line", "return {}")
	if err != nil {
		panic("luaproc: " + err.Error())
	}
	return s.proto
})

// mainBoot returns the root task's function and arguments of a main
// process with Before chunks: builtin/main.lua's chunk, which runs them
// and then boot with the script's chunk.
func (p *luaProcess) mainBoot(chunk *lua.LFunction, method string) (*lua.LFunction, []lua.LValue) {
	before := p.L.CreateTable(len(p.main.Before), 0)
	for i, s := range p.main.Before {
		before.RawSetInt(i+1, p.L.NewFunctionFromProto(s.proto))
	}
	args := make([]lua.LValue, 0, 5+len(p.input))
	args = append(args, p.L.NewFunction(p.arm), before, p.tpl.boot, chunk, lua.LString(method))
	for _, v := range p.input {
		args = append(args, toLuaValue(p.L, v))
	}
	return p.L.NewFunctionFromProto(builtinProto("main")), args
}

// setMainArgs adds MainOptions' part of arg to t (argTable).
func (p *luaProcess) setMainArgs(t *lua.LTable) {
	n := len(p.main.ArgBefore)
	for i, a := range p.main.ArgBefore {
		t.RawSetInt(i-n, lua.LString(a))
	}
	if p.main.Arg0 == "" {
		t.RawSetInt(0, lua.LNil)
	} else {
		t.RawSetInt(0, lua.LString(p.main.Arg0))
	}
}
