package lua

// luarun: chunks that only define global functions, and function
// templates that stand for them in shared tables.
//
// A luarun process runs its script's chunk to get its own globals. Most
// scripts of many small processes (a handler, a worker) are only
// `function name(...) ... end` at the top level: running such a chunk
// makes one closure per definition and writes it to the state's globals,
// and nothing else — no upvalues to share, no other effect. For those
// chunks (GlobalDefinitions) an embedder can skip the run: it puts a
// template of each function (NewFunctionTemplate) in a shared table that
// the state's globals are a view of (cow.go). No state ever holds a
// template: a read through a view yields the state's own closure of the
// template's proto, made on first read and kept in the view, with the
// state's globals as its environment — the closure the chunk would have
// made, made only if read.

// perStateEnv is the environment of a function template: a closure with
// it must never be called, and views replace it (ViewSet.mapped).
var perStateEnv = &LTable{}

// GlobalDefinitions reports whether the chunk proto does nothing but
// assign closures of its nested functions to globals (each nested
// function without upvalues) and return nothing; if so it returns each
// global's name and the function it ends up with (the last assignment
// of a name wins, as it would), in the order of the chunk.
func (proto *FunctionProto) GlobalDefinitions() (names []string, protos []*FunctionProto, ok bool) {
	code := proto.Code
	if len(code) == 0 || len(code)%2 != 1 || opGetOpCode(code[len(code)-1]) != OP_RETURN || opGetArgB(code[len(code)-1]) != 1 {
		return nil, nil, false
	}
	for i := 0; i+1 < len(code); i += 2 {
		closure, set := code[i], code[i+1]
		if opGetOpCode(closure) != OP_CLOSURE || opGetOpCode(set) != OP_SETGLOBAL || opGetArgA(closure) != opGetArgA(set) {
			return nil, nil, false
		}
		fn := proto.FunctionPrototypes[opGetArgBx(closure)]
		name, isString := proto.Constants[opGetArgBx(set)].(LString)
		if fn.NumUpvalues != 0 || !isString {
			return nil, nil, false
		}
		if j := indexOf(names, string(name)); j >= 0 {
			protos[j] = fn
			continue
		}
		names, protos = append(names, string(name)), append(protos, fn)
	}
	return names, protos, true
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// NewFunctionTemplate returns a template of proto (a function without
// upvalues) for a shared table: a state reading it through a view gets
// its own closure of proto instead, whose environment is that state's
// globals.
func NewFunctionTemplate(proto *FunctionProto) *LFunction {
	if proto.NumUpvalues != 0 {
		panic("lua: a function template cannot have upvalues")
	}
	return newLFunctionL(proto, perStateEnv, 0)
}

// isTemplate reports whether fn is a function template.
func (fn *LFunction) isTemplate() bool { return fn.Env == perStateEnv }

// NewTable returns an empty table with room for acap array items and
// hcap hash entries, tied to no state (its growth charges nothing): for
// an embedder's shared tables, built outside any state.
func NewTable(acap, hcap int) *LTable { return newLTable(acap, hcap) }
