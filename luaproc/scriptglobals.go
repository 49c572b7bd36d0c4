package luaproc

// A script whose chunk only defines global functions is not run in each
// process (lua/definitions.go): its processes' globals are a view of the
// script's own shared globals — the runtime's (template.globals) with a
// function template for each definition — and each process gets its own
// closure of a definition when it first reads its name, as if its chunk
// had made it. Running the chunk would have done nothing else: the
// definitions capture no upvalues and the chunk has no other statement.
// boot then runs noChunk, a Go function that returns nothing, in the
// chunk's place.
//
// The script's globals are made once per template (a Register rebuilds
// the template, and the next start rebuilds them), by the first process
// that starts; starts racing to make them each make a copy and one wins.

import (
	lua "github.com/luarun/luarun/lua"
)

// scriptGlobals is what a script's processes' globals are a view of,
// under one template.
type scriptGlobals struct {
	tpl *template
	// globals: tpl.globals with the script's function templates, which
	// stands in for tpl.globals (lua.ShareAs); nil when the chunk does
	// more than define global functions, and must run in every process
	globals *lua.LTable
}

// globalsFor returns what the globals of s's processes are a view of
// under tpl, and whether their chunk must run.
func (s *Script) globalsFor(tpl *template) (globals *lua.LTable, runChunk bool) {
	sg := s.globals.Load()
	if sg == nil || sg.tpl != tpl {
		sg = &scriptGlobals{tpl: tpl, globals: tpl.definitionsOf(s.proto)}
		s.globals.Store(sg)
	}
	if sg.globals == nil {
		return tpl.globals, true
	}
	return sg.globals, false
}

// globalsFor is s.globalsFor for p: a main process with chunks to run
// before its script's (the command's -e and -l) runs its script's chunk
// after them, as lua does — their code must not see the definitions
// before, and what they define must not hide the script's.
func (p *luaProcess) globalsFor(tpl *template) (globals *lua.LTable, runChunk bool) {
	if mo := p.mainOpts(); mo != nil && len(mo.Before) > 0 {
		return tpl.globals, true
	}
	return p.script.globalsFor(tpl)
}

// definitionsOf returns tpl.globals with a template of each function
// proto's chunk assigns to a global, if that is all the chunk does; else
// nil.
func (tpl *template) definitionsOf(proto *lua.FunctionProto) *lua.LTable {
	names, protos, ok := proto.GlobalDefinitions()
	if !ok {
		return nil
	}
	globals := lua.NewTable(0, tpl.globalsCount+len(names))
	tpl.globals.ForEach(func(k, v lua.LValue) { globals.RawSet(k, v) })
	globals.RawSetString("_G", globals) // _G names the state's globals (lua.ShareAs)
	for i, name := range names {
		globals.RawSetString(name, lua.NewFunctionTemplate(protos[i]))
	}
	globals.ShareAs(tpl.globals)
	return globals
}

// noChunk stands in for a chunk that need not run (globalsFor).
func noChunk(*lua.LState) int { return 0 }
