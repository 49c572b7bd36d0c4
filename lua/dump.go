package lua

// string.dump and binary chunks (luarun).
//
// A binary chunk is Lua 5.1's signature and version byte followed by
// luarun's own serialization of a compiled FunctionProto: it is not PUC
// Lua's bytecode (the instruction set is gopher-lua's), but it starts as a
// 5.1 chunk does, so code that sniffs the first byte ("\27") sees a
// binary chunk. The layout, all integers unsigned LEB128 varints unless
// said otherwise:
//
//	header    "\x1bLua" 0x51 'L' 'R' dumpVersion   (8 bytes)
//	function  string   SourceName ("@" first for a FileChunk's)
//	          varint   LineDefined, LastLineDefined
//	          byte     NumUpvalues, NumParameters, IsVarArg, NumUsedRegisters
//	          varint   n, then n × uint32 (little endian)      Code
//	          varint   n, then n constants: a tag byte, then
//	                   nothing (nil, false, true), 8 bytes of a float64's
//	                   bits, little endian (number), or a string
//	          varint   n, then n functions                    FunctionPrototypes
//	          varint   n, then n varints                      DbgSourcePositions
//	          varint   n, then n × (string, varint, varint)   DbgLocals
//	          varint   n, then n × (string, varint)           DbgCalls
//	          varint   n, then n strings                      DbgUpvalues
//	string    varint length, then the bytes
//
// PUC Lua 5.1 writes a 0 format byte where luarun writes 'L', so lua5.1
// refuses luarun's chunks ("bad header") and luarun refuses lua5.1's
// with a message that says so. An undumped function is checked (undump's
// verify) before it is accepted: a corrupt or truncated chunk is an error,
// never a Go panic. As in 5.1, bytes after the function are ignored.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/luarun/luarun/lua/parse"
)

// dumpVersion is the version of luarun's format: a chunk of another
// version is refused. Change it whenever FunctionProto, the instruction
// set or the layout above changes.
const dumpVersion = 1

const (
	luaSignature = "\x1bLua"
	dumpHeader   = luaSignature + "\x51" + "LR" + string(rune(dumpVersion))
)

const (
	dumpTagNil = iota
	dumpTagFalse
	dumpTagTrue
	dumpTagNumber
	dumpTagString
)

// maxUndumpDepth bounds the nesting of functions in a chunk (the parser
// allows far fewer: LUAI_MAXCCALLS, 200).
const maxUndumpDepth = 250

// UndumpError is a binary chunk that cannot be loaded: Error reads as Lua
// 5.1's "name: bad header in precompiled chunk".
type UndumpError struct {
	Name string // the chunk's name as shown (5.1's "binary string" for loadstring's)
	Msg  string // "unexpected end", "bad header (...)", "bad code", ...
}

func (e *UndumpError) Error() string {
	return fmt.Sprintf("%s: %s in precompiled chunk", e.Name, e.Msg)
}

// undumpName is how Lua 5.1's lundump names the chunk named source in
// its errors.
func undumpName(source string) string {
	switch {
	case strings.HasPrefix(source, "@"), strings.HasPrefix(source, "="):
		return source[1:]
	case strings.HasPrefix(source, luaSignature[:1]):
		return "binary string"
	}
	return source
}

// IsBinaryChunk reports whether a chunk starting with b is a binary one
// (its first byte is "\27", as Lua 5.1 decides).
func IsBinaryChunk(b []byte) bool {
	return len(b) > 0 && b[0] == luaSignature[0]
}

// Dump is string.dump's serialization of proto (with its nested
// functions), to be loaded by Undump or by load/loadstring/LState.Load.
func Dump(proto *FunctionProto) []byte {
	d := &dumper{buf: make([]byte, 0, 256)}
	d.buf = append(d.buf, dumpHeader...)
	d.function(proto)
	return d.buf
}

type dumper struct{ buf []byte }

func (d *dumper) uint(n uint64) { d.buf = binary.AppendUvarint(d.buf, n) }
func (d *dumper) int(n int) {
	if n < 0 { // never made by the compiler; kept as 0
		n = 0
	}
	d.uint(uint64(n))
}
func (d *dumper) str(s string) { d.int(len(s)); d.buf = append(d.buf, s...) }

func (d *dumper) function(p *FunctionProto) {
	if p.FileChunk { // luarun: a script's function keeps its "@name" source, as 5.1's dump does
		d.str("@" + p.SourceName)
	} else {
		d.str(p.SourceName)
	}
	d.int(p.LineDefined)
	d.int(p.LastLineDefined)
	d.buf = append(d.buf, p.NumUpvalues, p.NumParameters, p.IsVarArg, p.NumUsedRegisters)
	d.int(len(p.Code))
	for _, c := range p.Code {
		d.buf = binary.LittleEndian.AppendUint32(d.buf, c)
	}
	d.int(len(p.Constants))
	for _, k := range p.Constants {
		switch v := k.(type) {
		case LNumber:
			d.buf = append(d.buf, dumpTagNumber)
			d.buf = binary.LittleEndian.AppendUint64(d.buf, math.Float64bits(float64(v)))
		case LString:
			d.buf = append(d.buf, dumpTagString)
			d.str(string(v))
		case LBool:
			if v {
				d.buf = append(d.buf, dumpTagTrue)
			} else {
				d.buf = append(d.buf, dumpTagFalse)
			}
		default: // nil (the compiler makes no other constant)
			d.buf = append(d.buf, dumpTagNil)
		}
	}
	d.int(len(p.FunctionPrototypes))
	for _, f := range p.FunctionPrototypes {
		d.function(f)
	}
	d.int(len(p.DbgSourcePositions))
	for _, line := range p.DbgSourcePositions {
		d.int(line)
	}
	d.int(len(p.DbgLocals))
	for _, l := range p.DbgLocals {
		d.str(l.Name)
		d.int(l.StartPc)
		d.int(l.EndPc)
	}
	d.int(len(p.DbgCalls))
	for _, c := range p.DbgCalls {
		d.str(c.Name)
		d.int(c.Pc)
	}
	d.int(len(p.DbgUpvalues))
	for _, u := range p.DbgUpvalues {
		d.str(u)
	}
}

// Undump loads a chunk made by Dump; name is the chunk's name as Lua 5.1
// has it ("=name", "@file", or the text: "binary string"), for errors,
// which are *UndumpError. The functions keep the names and lines they
// were compiled with.
func Undump(chunk []byte, name string) (*FunctionProto, error) {
	u := &undumper{data: chunk, name: undumpName(name)}
	if err := u.header(); err != nil {
		return nil, err
	}
	p, err := u.function(0)
	if err != nil {
		return nil, err
	}
	return p, nil
}

type undumper struct {
	data []byte
	pos  int
	name string
}

func (u *undumper) fail(msg string) error { return &UndumpError{Name: u.name, Msg: msg} }

var errUnexpectedEnd = errors.New("unexpected end")

func (u *undumper) header() error {
	h := u.data
	switch {
	case len(h) < len(dumpHeader): // 5.1 reads its whole header first, too
		return u.fail("unexpected end")
	case string(h[:len(luaSignature)]) != luaSignature:
		return u.fail("bad header")
	case h[4] != 0x51:
		return u.fail(fmt.Sprintf("bad header (version %d.%d, not 5.1)", h[4]>>4, h[4]&15))
	case h[5] == 0:
		return u.fail("bad header (PUC Lua bytecode: luarun loads only chunks made by its own string.dump)")
	case h[5] != 'L' || h[6] != 'R':
		return u.fail("bad header (not a luarun chunk)")
	case h[7] != dumpVersion:
		return u.fail(fmt.Sprintf("bad header (luarun chunk format %d, this luarun reads %d)", h[7], dumpVersion))
	}
	u.pos = len(dumpHeader)
	return nil
}

func (u *undumper) byte() (byte, error) {
	if u.pos >= len(u.data) {
		return 0, errUnexpectedEnd
	}
	b := u.data[u.pos]
	u.pos++
	return b, nil
}

// int reads a varint no larger than max.
func (u *undumper) int(max int) (int, error) {
	n, w := binary.Uvarint(u.data[u.pos:])
	switch {
	case w == 0:
		return 0, errUnexpectedEnd
	case w < 0 || n > uint64(max):
		return 0, errors.New("bad integer")
	}
	u.pos += w
	return int(n), nil
}

// count reads a number of items each at least size bytes long: there
// must be that many bytes left (so a corrupt count allocates nothing).
func (u *undumper) count(size int) (int, error) {
	n, err := u.int(math.MaxInt32)
	if err != nil {
		return 0, err
	}
	if n > (len(u.data)-u.pos)/size {
		return 0, errUnexpectedEnd
	}
	return n, nil
}

func (u *undumper) str() (string, error) {
	n, err := u.count(1)
	if err != nil {
		return "", err
	}
	s := string(u.data[u.pos : u.pos+n])
	u.pos += n
	return s, nil
}

func (u *undumper) function(depth int) (*FunctionProto, error) {
	p, err := u.readFunction(depth)
	if err != nil {
		if ue, ok := err.(*UndumpError); ok {
			return nil, ue
		}
		return nil, u.fail(err.Error())
	}
	if msg := verifyProto(p); msg != "" {
		return nil, u.fail(msg)
	}
	return p, nil
}

func (u *undumper) readFunction(depth int) (p *FunctionProto, err error) {
	if depth > maxUndumpDepth {
		return nil, errors.New("bad code (functions nested too deep)")
	}
	p = &FunctionProto{}
	if p.SourceName, err = u.str(); err != nil {
		return nil, err
	}
	if p.LineDefined, err = u.int(math.MaxInt32); err != nil {
		return nil, err
	}
	if p.LastLineDefined, err = u.int(math.MaxInt32); err != nil {
		return nil, err
	}
	for _, b := range []*uint8{&p.NumUpvalues, &p.NumParameters, &p.IsVarArg, &p.NumUsedRegisters} {
		if *b, err = u.byte(); err != nil {
			return nil, err
		}
	}

	n, err := u.count(4)
	if err != nil {
		return nil, err
	}
	p.Code = make([]uint32, n)
	for i := range p.Code {
		p.Code[i] = binary.LittleEndian.Uint32(u.data[u.pos:])
		u.pos += 4
	}

	if n, err = u.count(1); err != nil {
		return nil, err
	}
	p.Constants = make([]LValue, n)
	p.stringConstants = make([]string, n)
	p.stringHashes = make([]uint32, n)
	for i := range p.Constants {
		tag, err := u.byte()
		if err != nil {
			return nil, err
		}
		switch tag {
		case dumpTagNil:
			p.Constants[i] = LNil
		case dumpTagFalse:
			p.Constants[i] = LFalse
		case dumpTagTrue:
			p.Constants[i] = LTrue
		case dumpTagNumber:
			if len(u.data)-u.pos < 8 {
				return nil, errUnexpectedEnd
			}
			p.Constants[i] = LNumber(math.Float64frombits(binary.LittleEndian.Uint64(u.data[u.pos:])))
			u.pos += 8
		case dumpTagString:
			s, err := u.str()
			if err != nil {
				return nil, err
			}
			p.Constants[i] = LString(s)
			p.stringConstants[i] = s
			p.stringHashes[i] = strHash(s)
		default:
			return nil, errors.New("bad constant")
		}
	}

	if n, err = u.count(1); err != nil {
		return nil, err
	}
	p.FunctionPrototypes = make([]*FunctionProto, n)
	for i := range p.FunctionPrototypes {
		if p.FunctionPrototypes[i], err = u.function(depth + 1); err != nil {
			return nil, err
		}
	}

	if n, err = u.count(1); err != nil {
		return nil, err
	}
	p.DbgSourcePositions = make([]int, n)
	for i := range p.DbgSourcePositions {
		if p.DbgSourcePositions[i], err = u.int(math.MaxInt32); err != nil {
			return nil, err
		}
	}

	if n, err = u.count(3); err != nil {
		return nil, err
	}
	p.DbgLocals = make([]*DbgLocalInfo, n)
	for i := range p.DbgLocals {
		l := &DbgLocalInfo{}
		if l.Name, err = u.str(); err != nil {
			return nil, err
		}
		if l.StartPc, err = u.int(math.MaxInt32); err != nil {
			return nil, err
		}
		if l.EndPc, err = u.int(math.MaxInt32); err != nil {
			return nil, err
		}
		p.DbgLocals[i] = l
	}

	if n, err = u.count(2); err != nil {
		return nil, err
	}
	p.DbgCalls = make([]DbgCall, n)
	for i := range p.DbgCalls {
		if p.DbgCalls[i].Name, err = u.str(); err != nil {
			return nil, err
		}
		if p.DbgCalls[i].Pc, err = u.int(math.MaxInt32); err != nil {
			return nil, err
		}
	}

	if n, err = u.count(1); err != nil {
		return nil, err
	}
	p.DbgUpvalues = make([]string, n)
	for i := range p.DbgUpvalues {
		if p.DbgUpvalues[i], err = u.str(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// verifyProto checks what the VM takes on trust from the compiler: that
// every constant, nested function, upvalue and jump an instruction names
// exists, that the debug information matches the code, and that the code
// ends in a return. It is a smaller check than 5.1's luaG_checkcode (a
// register beyond NumUsedRegisters is not looked for): it keeps the VM
// from indexing outside the function's own tables. The message is "" for
// a function that passes, else "bad code (...)".
func verifyProto(p *FunctionProto) string {
	bad := func(format string, args ...interface{}) string {
		return "bad code (" + fmt.Sprintf(format, args...) + ")"
	}
	switch {
	case len(p.Code) == 0:
		return bad("no instructions")
	case len(p.DbgSourcePositions) != len(p.Code):
		return bad("line information does not match the code")
	case int(p.NumUpvalues) != len(p.DbgUpvalues):
		return bad("upvalue names do not match the upvalue count")
	case int(p.NumParameters) > int(p.NumUsedRegisters):
		return bad("more parameters than registers")
	case opGetOpCode(p.Code[len(p.Code)-1]) != OP_RETURN:
		return bad("no final return")
	}
	nk := len(p.Constants)
	rk := func(mode opArgMode, v int) bool {
		return mode != opArgModeK || v&opBitRk == 0 || v&^opBitRk < nk
	}
	for pc := 0; pc < len(p.Code); pc++ {
		inst := p.Code[pc]
		op := opGetOpCode(inst)
		if op < 0 || op > opCodeMax {
			return bad("opcode %d at %d", op, pc+1)
		}
		prop := opProps[op]
		b, c := opGetArgB(inst), opGetArgC(inst)
		bx, sbx := opGetArgBx(inst), opGetArgSbx(inst)
		if prop.Type == opTypeABC && (!rk(prop.ModeArgB, b) || !rk(prop.ModeArgC, c)) {
			return bad("constant out of range at %d", pc+1)
		}
		switch op {
		case OP_LOADK, OP_GETGLOBAL, OP_SETGLOBAL:
			if bx >= nk {
				return bad("constant out of range at %d", pc+1)
			}
		case OP_GETUPVAL, OP_SETUPVAL:
			if b >= int(p.NumUpvalues) {
				return bad("upvalue out of range at %d", pc+1)
			}
		case OP_JMP, OP_FORLOOP, OP_FORPREP:
			if t := pc + 1 + sbx; t < 0 || t >= len(p.Code) {
				return bad("jump out of range at %d", pc+1)
			}
		case OP_LOADBOOL, OP_EQ, OP_LT, OP_LE, OP_TEST, OP_TESTSET, OP_TFORLOOP:
			// these skip the next instruction
			if pc+1 >= len(p.Code) {
				return bad("skip past the end at %d", pc+1)
			}
		case OP_SETLIST:
			if c == 0 { // the next word is the block number
				pc++
				if pc >= len(p.Code) {
					return bad("SETLIST without its block at %d", pc)
				}
			}
		case OP_CLOSURE:
			if bx >= len(p.FunctionPrototypes) {
				return bad("function out of range at %d", pc+1)
			}
			// followed by one MOVE or GETUPVAL per upvalue of the closure
			nup := int(p.FunctionPrototypes[bx].NumUpvalues)
			if pc+nup >= len(p.Code) {
				return bad("closure's upvalues past the end at %d", pc+1)
			}
			for i := 1; i <= nup; i++ {
				pseudo := p.Code[pc+i]
				switch opGetOpCode(pseudo) {
				case OP_MOVE:
				case OP_GETUPVAL:
					if opGetArgB(pseudo) >= int(p.NumUpvalues) {
						return bad("upvalue out of range at %d", pc+1+i)
					}
				default:
					return bad("closure's upvalue %d at %d", i, pc+1)
				}
			}
			pc += nup
		}
	}
	return ""
}

// loadChunk is LState.Load's: a binary chunk (first byte "\27") is
// undumped, anything else parsed and compiled. name is the chunk's name.
// The errors are *ApiError. The parse and compile count steps of ls's
// interrupt budget (Tick): an interrupt is raised in ls, as the VM
// raises it, not returned as a syntax error. (luarun)
func loadChunk(ls *LState, reader io.Reader, name string) (*FunctionProto, error) {
	br, ok := reader.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(reader)
	}
	if first, _ := br.Peek(1); IsBinaryChunk(first) {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, newApiErrorE(ApiErrorFile, err)
		}
		proto, err := Undump(data, name)
		if err != nil {
			return nil, newApiErrorE(ApiErrorSyntax, err)
		}
		return proto, nil
	}
	chunk, err := parse.ParseTick(br, name, ls.tickError)
	if err != nil {
		return nil, ls.loadError(err)
	}
	proto, err := CompileTick(chunk, name, ls.tickError)
	if err != nil {
		return nil, ls.loadError(err)
	}
	return proto, nil
}

// loadError is the *ApiError of a parse or compile error; an interrupt
// is raised instead.
func (ls *LState) loadError(err error) error {
	var ie *parse.Interrupted
	if errors.As(err, &ie) {
		ls.RaiseError("%s", ie.Err.Error())
	}
	return newApiErrorE(ApiErrorSyntax, err)
}

// newLoadedFunction is a loaded chunk's function: in env, with fresh
// (nil) upvalues, as 5.1's lua_load makes it (a dumped function may have
// upvalues; a compiled chunk has none).
func newLoadedFunction(proto *FunctionProto, env *LTable) *LFunction {
	fn := newLFunctionL(proto, env, int(proto.NumUpvalues))
	for i := range fn.Upvalues {
		fn.Upvalues[i] = &Upvalue{closed: true, value: LNil}
	}
	return fn
}

// strDump is string.dump(f): Lua 5.1's error for a Go function.
func strDump(L *LState) int {
	fn := L.CheckFunction(1)
	if fn.IsG || fn.Proto == nil {
		L.RaiseError("unable to dump given function")
	}
	L.Push(LString(Dump(fn.Proto)))
	return 1
}
