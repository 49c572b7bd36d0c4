package lua

import (
	"fmt"
	"strings"
)

const (
	VarArgHasArg   uint8 = 1
	VarArgIsVarArg uint8 = 2
	VarArgNeedsArg uint8 = 4
)

type DbgLocalInfo struct {
	Name    string
	StartPc int
	EndPc   int
}

type DbgCall struct {
	Name string
	Pc   int
}

type FunctionProto struct {
	SourceName       string
	LineDefined      int
	LastLineDefined  int
	NumUpvalues      uint8
	NumParameters    uint8
	IsVarArg         uint8
	NumUsedRegisters uint8
	// StandsForC marks an embedder's Lua function that scripts are to see
	// as a C function (luarun: luaproc's built-in code): the tail calls it
	// makes are not counted in its frame's TailCall, as Lua 5.1 keeps no
	// lost tail-call levels for a C function (luarun's fork).
	StandsForC bool
	// FileChunk marks the functions of a chunk the embedder compiled as a
	// script or file (luarun: luaproc.Compile sets it on every function
	// of the chunk): debug.getinfo gives their source as "@name", as Lua
	// 5.1 names a file's chunk, where a chunk of load or loadstring keeps
	// its chunk name. On the proto, so that nothing outlives the script
	// (luarun's fork: a global set of names did, and never shrank).
	FileChunk          bool
	Code               []uint32
	Constants          []LValue
	FunctionPrototypes []*FunctionProto

	DbgSourcePositions []int
	DbgLocals          []*DbgLocalInfo
	DbgCalls           []DbgCall
	DbgUpvalues        []string

	stringConstants []string
	// luarun: textName is set on the protos of a chunk load or loadstring
	// named (Lua 5.1's source string, neither "=name" nor "@file"):
	// positions show SourceName as luaO_chunkid does, [string "name"]. A
	// plain SourceName without it is a Go-given name (a file's path,
	// "<string>"), shown as it is.
	textName bool
	// luarun: strHash of each string constant (table.go), so that a
	// field access with a constant key does not hash it
	stringHashes []uint32
}

/* Upvalue {{{ */

type Upvalue struct {
	next   *Upvalue
	reg    *registry
	index  int
	value  LValue
	closed bool
}

func (uv *Upvalue) Value() LValue {
	//if uv.IsClosed() {
	if uv.closed || uv.reg == nil {
		return uv.value
	}
	//return uv.reg.Get(uv.index)
	return uv.reg.array[uv.index]
}

func (uv *Upvalue) SetValue(value LValue) {
	if uv.IsClosed() {
		uv.value = value
	} else {
		uv.reg.Set(uv.index, value)
	}
}

func (uv *Upvalue) Close() {
	value := uv.Value()
	uv.closed = true
	uv.value = value
}

func (uv *Upvalue) IsClosed() bool {
	return uv.closed || uv.reg == nil
}

func UpvalueIndex(i int) int {
	return GlobalsIndex - i
}

/* }}} */

/* FunctionProto {{{ */

func newFunctionProto(name string) *FunctionProto {
	return &FunctionProto{
		SourceName:         name,
		LineDefined:        0,
		LastLineDefined:    0,
		NumUpvalues:        0,
		NumParameters:      0,
		IsVarArg:           0,
		NumUsedRegisters:   2,
		Code:               make([]uint32, 0, 128),
		Constants:          make([]LValue, 0, 32),
		FunctionPrototypes: make([]*FunctionProto, 0, 16),

		DbgSourcePositions: make([]int, 0, 128),
		DbgLocals:          make([]*DbgLocalInfo, 0, 16),
		DbgCalls:           make([]DbgCall, 0, 128),
		DbgUpvalues:        make([]string, 0, 16),

		stringConstants: make([]string, 0, 32),
	}
}

func (fp *FunctionProto) String() string {
	return fp.str(1, 0)
}

func (fp *FunctionProto) str(level int, count int) string {
	indent := strings.Repeat("  ", level-1)
	buf := []string{}
	buf = append(buf, fmt.Sprintf("%v; function [%v] definition (level %v)\n",
		indent, count, level))
	buf = append(buf, fmt.Sprintf("%v; %v upvalues, %v params, %v stacks\n",
		indent, fp.NumUpvalues, fp.NumParameters, fp.NumUsedRegisters))
	for reg, linfo := range fp.DbgLocals {
		buf = append(buf, fmt.Sprintf("%v.local %v ; %v\n", indent, linfo.Name, reg))
	}
	for reg, upvalue := range fp.DbgUpvalues {
		buf = append(buf, fmt.Sprintf("%v.upvalue %v ; %v\n", indent, upvalue, reg))
	}
	for reg, conzt := range fp.Constants {
		buf = append(buf, fmt.Sprintf("%v.const %v ; %v\n", indent, conzt.String(), reg))
	}
	buf = append(buf, "\n")

	protono := 0
	dataword := false
	for no, code := range fp.Code {
		if dataword { // SETLIST's block number (luarun)
			buf = append(buf, fmt.Sprintf("%v[%03d] (SETLIST block %v) (line:%v)\n", indent, no+1, code, fp.DbgSourcePositions[no]))
			dataword = false
			continue
		}
		inst := opGetOpCode(code)
		dataword = inst == OP_SETLIST && opGetArgC(code) == 0
		if inst == OP_CLOSURE {
			buf = append(buf, "\n")
			buf = append(buf, fp.FunctionPrototypes[protono].str(level+1, protono))
			buf = append(buf, "\n")
			protono++
		}
		buf = append(buf, fmt.Sprintf("%v[%03d] %v (line:%v)\n",
			indent, no+1, opToString(code), fp.DbgSourcePositions[no]))

	}
	buf = append(buf, fmt.Sprintf("%v; end of function\n", indent))
	return strings.Join(buf, "")
}

/* }}} */

/* LFunction {{{ */

func newLFunctionL(proto *FunctionProto, env *LTable, nupvalue int) *LFunction {
	return &LFunction{
		IsG: false,
		Env: env,

		Proto:     proto,
		GFunction: nil,
		Upvalues:  make([]*Upvalue, nupvalue),
	}
}

func newLFunctionG(gfunc LGFunction, env *LTable, nupvalue int) *LFunction {
	return &LFunction{
		IsG: true,
		Env: env,

		Proto:     nil,
		GFunction: gfunc,
		Upvalues:  make([]*Upvalue, nupvalue),
	}
}

func (fn *LFunction) LocalName(regno, pc int) (string, bool) {
	if fn.IsG {
		return "", false
	}
	p := fn.Proto
	for i := 0; i < len(p.DbgLocals) && p.DbgLocals[i].StartPc <= pc; i++ { // luarun: <=, as 5.1 (a parameter is a local at pc 0)
		if pc < p.DbgLocals[i].EndPc {
			regno--
			if regno == 0 {
				return p.DbgLocals[i].Name, true
			}
		}
	}
	return "", false
}

/* }}} */

// markTextName sets textName on p and every function nested in it.
func (p *FunctionProto) markTextName() {
	p.textName = true
	for _, c := range p.FunctionPrototypes {
		c.markTextName()
	}
}

// ProtoPositionSource is how a "chunk:line:" position and a traceback name
// the chunk of p: as 5.1's luaO_chunkid for a chunk load or loadstring
// named, else as PositionSource.
func ProtoPositionSource(p *FunctionProto) string {
	if p.textName {
		return chunkID(p.SourceName, idSize)
	}
	return PositionSource(p.SourceName)
}

// ReadsGlobal reports whether the code of fp or of a function nested in
// it reads the global name (an OP_GETGLOBAL of it): whether the chunk
// ever uses a global function it defines (luarun's fork: luaproc tells a
// misspelt main, which nothing calls, from a function the chunk calls).
func (fp *FunctionProto) ReadsGlobal(name string) bool {
	for _, inst := range fp.Code {
		if opGetOpCode(inst) == OP_GETGLOBAL {
			if k, ok := fp.Constants[opGetArgBx(inst)].(LString); ok && string(k) == name {
				return true
			}
		}
	}
	for _, p := range fp.FunctionPrototypes {
		if p.ReadsGlobal(name) {
			return true
		}
	}
	return false
}
