package lua

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/luarun/luarun/lua/ast"
	"github.com/luarun/luarun/lua/parse"
)

/* internal constants & structs  {{{ */

// maxRegisters is Lua 5.1's MAXSTACK: the registers a function may use
// ("function or expression too complex"; luarun: gopher-lua's 200, whose
// error said "too many local variables").
const maxRegisters = 250

// Lua 5.1's LUAI_MAXVARS and LUAI_MAXUPVALUES: the active local
// variables and the upvalues a function may have (luarun). The parser
// raises both first, as 5.1 does while it reads (parse/scope.go); these
// checks are for an AST that does not come from it.
const (
	maxLocalVars = 200
	maxUpvalues  = 60
)

type expContextType int

const (
	ecGlobal expContextType = iota
	ecUpvalue
	ecLocal
	ecTable
	ecVararg
	ecMethod
	ecNone
)

const regNotDefined = opMaxArgsA + 1
const labelNoJump = 0

type expcontext struct {
	ctype expContextType
	reg   int
	// varargopt >= 0: wants varargopt+1 results, i.e  a = func()
	// varargopt = -1: ignore results             i.e  func()
	// varargopt = -2: receive all results        i.e  a = {func()}
	varargopt int
}

type lblabels struct {
	t int
	f int
	e int
	b bool
}

type constLValueExpr struct {
	ast.ExprBase

	Value LValue
}

// }}}

/* utilities {{{ */
var _ecnone0 = &expcontext{ecNone, regNotDefined, 0}
var _ecnonem1 = &expcontext{ecNone, regNotDefined, -1}
var _ecnonem2 = &expcontext{ecNone, regNotDefined, -2}
var ecfuncdef = &expcontext{ecMethod, regNotDefined, 0}

func ecupdate(ec *expcontext, ctype expContextType, reg, varargopt int) {
	if ec == _ecnone0 || ec == _ecnonem1 || ec == _ecnonem2 {
		panic("can not update ec cache")
	}
	ec.ctype = ctype
	ec.reg = reg
	ec.varargopt = varargopt
}

func ecnone(varargopt int) *expcontext {
	switch varargopt {
	case 0:
		return _ecnone0
	case -1:
		return _ecnonem1
	case -2:
		return _ecnonem2
	}
	return &expcontext{ecNone, regNotDefined, varargopt}
}

func shouldmove(ec *expcontext, reg int) bool {
	return ec.ctype == ecLocal && ec.reg != regNotDefined && ec.reg != reg
}

// bodyEnd is line, a statement's BodyEnd or ThenEnd, or the statement's
// last line where it has none (one the compiler made) (luarun).
func bodyEnd(line int, stmt ast.Stmt) int {
	if line > 0 {
		return line
	}
	return eline(stmt)
}

// blockLines is the lines of a block: its statement's first, and end
// (the line of the block's last token, where Lua 5.1 closes its
// upvalues) (luarun).
func blockLines(stmt ast.Stmt, end int) ast.PositionHolder {
	n := &ast.Node{}
	n.SetLine(sline(stmt))
	n.SetLastLine(end)
	return n
}

func sline(pos ast.PositionHolder) int {
	return pos.Line()
}

func eline(pos ast.PositionHolder) int {
	line := pos.LastLine()
	if line == 0 {
		return pos.Line()
	}
	return line
}

func savereg(ec *expcontext, reg int) int {
	if ec.ctype != ecLocal || ec.reg == regNotDefined {
		return reg
	}
	return ec.reg
}

func raiseCompileError(context *funcContext, line int, format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	panic(&CompileError{context: context, Line: line, Message: msg})
}

func isVarArgReturnExpr(expr ast.Expr) bool {
	switch ex := expr.(type) {
	case *ast.FuncCallExpr:
		return !ex.AdjustRet
	case *ast.Comma3Expr:
		return !ex.AdjustRet
	}
	return false
}

func lnumberValue(expr ast.Expr) (LNumber, bool) {
	if ex, ok := expr.(*ast.NumberExpr); ok {
		lv, err := parseNumber(ex.Value)
		if err != nil {
			lv = LNumber(math.NaN())
		}
		return lv, true
	} else if ex, ok := expr.(*constLValueExpr); ok {
		return ex.Value.(LNumber), true
	}
	return 0, false
}

/* utilities }}} */

type gotoLabelDesc struct { // {{{
	Id                 int
	Name               string
	Pc                 int
	Line               int
	NumActiveLocalVars int
}

func newLabelDesc(id int, name string, pc, line, n int) *gotoLabelDesc {
	return &gotoLabelDesc{
		Id:                 id,
		Name:               name,
		Pc:                 pc,
		Line:               line,
		NumActiveLocalVars: n,
	}
}

func (l *gotoLabelDesc) SetNumActiveLocalVars(n int) {
	l.NumActiveLocalVars = n
} // }}}

type CompileError struct { // {{{
	context *funcContext
	Line    int
	Message string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("compile error near line(%v) %v: %v", e.Line, e.context.Proto.SourceName, e.Message)
} // }}}

type codeStore struct { // {{{
	codes []uint32
	lines []int
	pc    int
	// dataPc is the pc of the last word that is data, not an instruction
	// (SETLIST's block number), or -1: Last does not show it, so that no
	// peephole takes it for a MOVE and pops it (luarun)
	dataPc int
	// lastTarget is the last pc a jump may land on (set by labels), or
	// -1: Lua 5.1's lasttarget, below which AddLoadNil may join or drop
	// a LOADNIL (luarun)
	lastTarget int
	// nilTop is the highest register a dropped LOADNIL would have set,
	// or -1: the frame still holds it (patchCode) (luarun)
	nilTop int
}

func (cd *codeStore) Add(inst uint32, line int) {
	if l := len(cd.codes); l <= 0 || cd.pc == l {
		cd.codes = append(cd.codes, inst)
		cd.lines = append(cd.lines, line)
	} else {
		cd.codes[cd.pc] = inst
		cd.lines[cd.pc] = line
	}
	cd.pc++
}

func (cd *codeStore) AddABC(op int, a int, b int, c int, line int) {
	cd.Add(opCreateABC(op, a, b, c), line)
}

func (cd *codeStore) AddABx(op int, a int, bx int, line int) {
	cd.Add(opCreateABx(op, a, bx), line)
}

func (cd *codeStore) AddASbx(op int, a int, sbx int, line int) {
	cd.Add(opCreateASbx(op, a, sbx), line)
}

func (cd *codeStore) PropagateKMV(top int, save *int, reg *int, inc int) {
	lastinst := cd.Last()
	if opGetArgA(lastinst) >= top {
		switch opGetOpCode(lastinst) {
		case OP_LOADK:
			cindex := opGetArgBx(lastinst)
			if cindex <= opMaxIndexRk {
				cd.Pop()
				*save = opRkAsk(cindex)
				return
			}
		case OP_MOVE:
			cd.Pop()
			*save = opGetArgB(lastinst)
			return
		}
	}
	*save = *reg
	*reg = *reg + inc
}

func (cd *codeStore) PropagateMV(top int, save *int, reg *int, inc int) {
	lastinst := cd.Last()
	if opGetArgA(lastinst) >= top {
		switch opGetOpCode(lastinst) {
		case OP_MOVE:
			cd.Pop()
			*save = opGetArgB(lastinst)
			return
		}
	}
	*save = *reg
	*reg = *reg + inc
}

// AddLoadNil sets registers a..b to nil, as Lua 5.1's luaK_nil (luarun):
// unless a jump may land here, nothing is emitted at the start of a
// function for registers above its nactvar locals (a frame's registers
// start nil), and a LOADNIL right before that the range meets or
// overlaps grows to cover it. (gopher-lua had dropped its merging, which
// ignored jump targets; the line hook and tracebacks see 5.1's lines
// only without the extra instructions.)
func (cd *codeStore) AddLoadNil(a, b, nactvar, line int) {
	if cd.pc > cd.lastTarget {
		if cd.pc == 0 {
			if a >= nactvar {
				cd.nilTop = max(cd.nilTop, b)
				return
			}
		} else if cd.pc-1 != cd.dataPc {
			prev := cd.codes[cd.pc-1]
			if opGetOpCode(prev) == OP_LOADNIL {
				pfrom, pto := opGetArgA(prev), opGetArgB(prev)
				if pfrom <= a && a <= pto+1 {
					if b > pto {
						cd.SetB(cd.pc-1, b)
					}
					return
				}
			}
		}
	}
	cd.AddABC(OP_LOADNIL, a, b, 0, line)
}

func (cd *codeStore) SetOpCode(pc int, v int) {
	opSetOpCode(&cd.codes[pc], v)
}

func (cd *codeStore) SetA(pc int, v int) {
	opSetArgA(&cd.codes[pc], v)
}

func (cd *codeStore) SetB(pc int, v int) {
	opSetArgB(&cd.codes[pc], v)
}

func (cd *codeStore) SetC(pc int, v int) {
	opSetArgC(&cd.codes[pc], v)
}

func (cd *codeStore) SetBx(pc int, v int) {
	opSetArgBx(&cd.codes[pc], v)
}

func (cd *codeStore) SetSbx(pc int, v int) {
	opSetArgSbx(&cd.codes[pc], v)
}

func (cd *codeStore) At(pc int) uint32 {
	return cd.codes[pc]
}

func (cd *codeStore) List() []uint32 {
	return cd.codes[:cd.pc]
}

func (cd *codeStore) PosList() []int {
	return cd.lines[:cd.pc]
}

func (cd *codeStore) LastPC() int {
	return cd.pc - 1
}

// AddData adds a word that is data for the instruction before it.
func (cd *codeStore) AddData(word uint32, line int) {
	cd.Add(word, line)
	cd.dataPc = cd.pc - 1
}

func (cd *codeStore) Last() uint32 {
	if cd.pc == 0 || cd.pc-1 == cd.dataPc {
		return opInvalidInstruction
	}
	return cd.codes[cd.pc-1]
}

func (cd *codeStore) Pop() {
	cd.pc--
} /* }}} Code */

/* {{{ VarNamePool */

type varNamePoolValue struct {
	Index int
	Name  string
}

type varNamePool struct {
	names  []string
	offset int
}

func newVarNamePool(offset int) *varNamePool {
	return &varNamePool{make([]string, 0, 16), offset}
}

func (vp *varNamePool) Names() []string {
	return vp.names
}

func (vp *varNamePool) List() []varNamePoolValue {
	result := make([]varNamePoolValue, len(vp.names), len(vp.names))
	for i, name := range vp.names {
		result[i].Index = i + vp.offset
		result[i].Name = name
	}
	return result
}

func (vp *varNamePool) LastIndex() int {
	return vp.offset + len(vp.names)
}

func (vp *varNamePool) Find(name string) int {
	for i := len(vp.names) - 1; i >= 0; i-- {
		if vp.names[i] == name {
			return i + vp.offset
		}
	}
	return -1
}

func (vp *varNamePool) RegisterUnique(name string) int {
	index := vp.Find(name)
	if index < 0 {
		return vp.Register(name)
	}
	return index
}

func (vp *varNamePool) Register(name string) int {
	vp.names = append(vp.names, name)
	return len(vp.names) - 1 + vp.offset
}

/* }}} VarNamePool */

/* FuncContext {{{ */

type codeBlock struct {
	LocalVars      *varNamePool
	BreakLabel     int
	Parent         *codeBlock
	RefUpvalue     bool
	LineStart      int
	LastLine       int
	labels         map[string]*gotoLabelDesc
	firstGotoIndex int
	// dbgLocals: the block's locals by their index in Proto.DbgLocals
	// (LocalVars has their registers, which blocks reuse) (luarun)
	dbgLocals []int
}

func newCodeBlock(localvars *varNamePool, blabel int, parent *codeBlock, pos ast.PositionHolder, firstGotoIndex int) *codeBlock {
	bl := &codeBlock{localvars, blabel, parent, false, 0, 0, map[string]*gotoLabelDesc{}, firstGotoIndex, nil}
	if pos != nil {
		bl.LineStart = pos.Line()
		bl.LastLine = pos.LastLine()
	}
	return bl
}

func (b *codeBlock) AddLabel(label *gotoLabelDesc) *gotoLabelDesc {
	if old, ok := b.labels[label.Name]; ok {
		return old
	}
	b.labels[label.Name] = label
	return nil
}

func (b *codeBlock) GetLabel(label string) *gotoLabelDesc {
	if v, ok := b.labels[label]; ok {
		return v
	}
	return nil
}

func (b *codeBlock) LocalVarsCount() int {
	count := 0
	for block := b; block != nil; block = block.Parent {
		count += len(block.LocalVars.Names())
	}
	return count
}

type funcContext struct {
	Proto           *FunctionProto
	Code            *codeStore
	Parent          *funcContext
	Upvalues        *varNamePool
	Block           *codeBlock
	Blocks          []*codeBlock
	regTop          int
	labelId         int
	labelPc         map[int]int
	gotosCount      int
	unresolvedGotos map[int]*gotoLabelDesc
	stringConsts    map[LString]int // index of each string constant
	numberConsts    map[LNumber]int // index of each number constant
	line            int             // the line of the statement being compiled (luarun: limit errors)
	// tick is called per statement and expression (CompileTick; shared
	// by the nested functions' contexts): an error it returns ends the
	// compile with a *parse.Interrupted (luarun)
	tick func() error
}

func newFuncContext(sourcename string, parent *funcContext) *funcContext {
	fc := &funcContext{
		Proto:           newFunctionProto(sourcename),
		Code:            &codeStore{make([]uint32, 0, 32), make([]int, 0, 32), 0, -1, -1, -1},
		Parent:          parent,
		Upvalues:        newVarNamePool(0),
		Block:           newCodeBlock(newVarNamePool(0), labelNoJump, nil, nil, 0),
		regTop:          0,
		labelId:         1,
		labelPc:         map[int]int{},
		gotosCount:      0,
		unresolvedGotos: map[int]*gotoLabelDesc{},
	}
	fc.Blocks = []*codeBlock{fc.Block}
	if parent != nil {
		fc.tick = parent.tick
	}
	return fc
}

func (fc *funcContext) CheckUnresolvedGoto() {
	for i := fc.Block.firstGotoIndex; i < fc.gotosCount; i++ {
		gotoLabel, ok := fc.unresolvedGotos[i]
		if !ok {
			continue
		}
		raiseCompileError(fc, fc.Proto.LastLineDefined, "no visible label '%s' for <goto> at line %d", gotoLabel.Name, gotoLabel.Line)
	}
}

func (fc *funcContext) AddUnresolvedGoto(label *gotoLabelDesc) {
	fc.unresolvedGotos[fc.gotosCount] = label
	fc.gotosCount++
}

func (fc *funcContext) AddNamedLabel(label *gotoLabelDesc) {
	if old := fc.Block.AddLabel(label); old != nil {
		raiseCompileError(fc, label.Line+1, "label '%s' already defined on line %d", label.Name, old.Line)
	}
	fc.SetLabelPc(label.Id, label.Pc)
}

func (fc *funcContext) GetNamedLabel(name string) *gotoLabelDesc {
	return fc.Block.GetLabel(name)
}

func (fc *funcContext) ResolveGoto(from, to *gotoLabelDesc, index int) {
	if from.NumActiveLocalVars < to.NumActiveLocalVars {
		varName := fc.Block.LocalVars.Names()[len(fc.Block.LocalVars.Names())-1]
		raiseCompileError(fc, to.Line+1, "<goto %s> at line %d jumps into the scope of local '%s'", to.Name, from.Line, varName)
	}
	fc.Code.SetSbx(from.Pc, to.Id)
	delete(fc.unresolvedGotos, index)
}

func (fc *funcContext) FindLabel(block *codeBlock, gotoLabel *gotoLabelDesc, i int) bool {
	target := block.GetLabel(gotoLabel.Name)
	if target != nil {
		if gotoLabel.NumActiveLocalVars > target.NumActiveLocalVars && block.RefUpvalue {
			fc.Code.SetA(gotoLabel.Pc-1, target.NumActiveLocalVars)
		}
		fc.ResolveGoto(gotoLabel, target, i)
		return true
	}
	return false
}

func (fc *funcContext) ResolveCurrentBlockGotosWithParentBlock() {
	blockActiveLocalVars := fc.Block.Parent.LocalVarsCount()
	for i := fc.Block.firstGotoIndex; i < fc.gotosCount; i++ {
		gotoLabel, ok := fc.unresolvedGotos[i]
		if !ok {
			continue
		}
		if gotoLabel.NumActiveLocalVars > blockActiveLocalVars {
			if fc.Block.RefUpvalue {
				fc.Code.SetA(gotoLabel.Pc-1, blockActiveLocalVars)
			}
			gotoLabel.SetNumActiveLocalVars(blockActiveLocalVars)
		}
		fc.FindLabel(fc.Block.Parent, gotoLabel, i)
	}
}

func (fc *funcContext) ResolveForwardGoto(target *gotoLabelDesc) {
	for i := fc.Block.firstGotoIndex; i <= fc.gotosCount; i++ {
		gotoLabel, ok := fc.unresolvedGotos[i]
		if !ok {
			continue
		}
		if gotoLabel.Name == target.Name {
			fc.ResolveGoto(gotoLabel, target, i)
		}
	}
}

func (fc *funcContext) NewLabel() int {
	ret := fc.labelId
	fc.labelId++
	return ret
}

func (fc *funcContext) SetLabelPc(label int, pc int) {
	fc.labelPc[label] = pc
	fc.Code.lastTarget = max(fc.Code.lastTarget, pc+1) // (luarun)
}

// nactvar is the number of registers active locals hold (Lua 5.1's
// fs->nactvar) (luarun).
func (fc *funcContext) nactvar() int {
	return fc.Block.LocalVars.LastIndex()
}

func (fc *funcContext) GetLabelPc(label int) int {
	return fc.labelPc[label]
}

// ConstIndex returns value's index in the function's constants, adding it
// if it is not there. Strings and numbers, the constants a chunk has, are
// found through maps (luarun: a linear search made compiling n constants
// O(n²), 40,000 took 6-18 s); the maps compare as the search did (NaN is
// never found, 0 and -0 are one constant).
func (fc *funcContext) ConstIndex(value LValue) int {
	switch cv := value.(type) {
	case LString:
		if i, ok := fc.stringConsts[cv]; ok {
			return i
		}
		value = internKey(cv, false) // intern.go: a shared table's key compares by pointer
	case LNumber:
		if i, ok := fc.numberConsts[cv]; ok {
			return i
		}
	default:
		for i, lv := range fc.Proto.Constants {
			if lv.Type() == value.Type() && lv == value {
				return i
			}
		}
	}
	fc.Proto.Constants = append(fc.Proto.Constants, value)
	v := len(fc.Proto.Constants) - 1
	switch cv := value.(type) {
	case LString:
		if fc.stringConsts == nil {
			fc.stringConsts = map[LString]int{}
		}
		fc.stringConsts[cv] = v
	case LNumber:
		if fc.numberConsts == nil {
			fc.numberConsts = map[LNumber]int{}
		}
		fc.numberConsts[cv] = v
	}
	if v > opMaxArgBx {
		raiseCompileError(fc, fc.Proto.LineDefined, "too many constants")
	}
	return v
}
func (fc *funcContext) BlockLocalVarsCount() int {
	count := 0
	for block := fc.Block; block != nil; block = block.Parent {
		count += len(block.LocalVars.Names())
	}
	return count
}

func (fc *funcContext) RegisterLocalVar(name string) int {
	if fc.BlockLocalVarsCount()+1 > maxLocalVars {
		fc.limitError(maxLocalVars, "local variables")
	}
	ret := fc.Block.LocalVars.Register(name)
	fc.Block.dbgLocals = append(fc.Block.dbgLocals, len(fc.Proto.DbgLocals))
	fc.Proto.DbgLocals = append(fc.Proto.DbgLocals, &DbgLocalInfo{Name: name, StartPc: fc.Code.LastPC() + 1})
	fc.SetRegTop(fc.RegTop() + 1)
	return ret
}

func (fc *funcContext) FindLocalVarAndBlock(name string) (int, *codeBlock) {
	for block := fc.Block; block != nil; block = block.Parent {
		if index := block.LocalVars.Find(name); index > -1 {
			return index, block
		}
	}
	return -1, nil
}

func (fc *funcContext) FindLocalVar(name string) int {
	idx, _ := fc.FindLocalVarAndBlock(name)
	return idx
}

func (fc *funcContext) LocalVars() []varNamePoolValue {
	result := make([]varNamePoolValue, 0, 32)
	for _, block := range fc.Blocks {
		result = append(result, block.LocalVars.List()...)
	}
	return result
}

func (fc *funcContext) EnterBlock(blabel int, pos ast.PositionHolder) {
	fc.Block = newCodeBlock(newVarNamePool(fc.RegTop()), blabel, fc.Block, pos, fc.gotosCount)
	fc.Blocks = append(fc.Blocks, fc.Block)
}

func (fc *funcContext) CloseUpvalues() int {
	n := -1
	if fc.Block.RefUpvalue {
		n = fc.Block.Parent.LocalVars.LastIndex()
		fc.Code.AddABC(OP_CLOSE, n, 0, 0, fc.Block.LastLine)
	}
	return n
}

func (fc *funcContext) LeaveBlock() int {
	closed := fc.CloseUpvalues()
	fc.EndScope()

	if fc.Block.Parent != nil {
		fc.ResolveCurrentBlockGotosWithParentBlock()
	}
	fc.Block = fc.Block.Parent
	fc.SetRegTop(fc.Block.LocalVars.LastIndex())
	return closed
}

func (fc *funcContext) EndScope() {
	// (gopher-lua indexed DbgLocals by register: a block's end ended
	// the function's first locals, not its own) (luarun)
	for _, i := range fc.Block.dbgLocals {
		fc.Proto.DbgLocals[i].EndPc = fc.Code.LastPC()
	}
}

// limitError raises Lua 5.1's errorlimit: "main function has more than
// 200 local variables", "function at line 3 has more than 60 upvalues",
// at the line of the statement being compiled (luarun; for a parsed chunk
// the parser has raised them already, at 5.1's line).
func (fc *funcContext) limitError(limit int, what string) {
	if fc.Parent == nil {
		raiseCompileError(fc, fc.line, "main function has more than %d %s", limit, what)
	}
	raiseCompileError(fc, fc.line, "function at line %d has more than %d %s", fc.Proto.LineDefined, limit, what)
}

// upvalueIndex is the index of the upvalue name, registered if new; past
// Lua 5.1's 60 upvalues it raises 5.1's error (luarun).
func (fc *funcContext) upvalueIndex(name string) int {
	if fc.Upvalues.Find(name) < 0 && len(fc.Upvalues.Names())+1 > maxUpvalues {
		fc.limitError(maxUpvalues, "upvalues")
	}
	return fc.Upvalues.RegisterUnique(name)
}

func (fc *funcContext) SetRegTop(top int) {
	if top > maxRegisters {
		raiseCompileError(fc, fc.line, "function or expression too complex")
	}
	fc.regTop = top
}

func (fc *funcContext) RegTop() int {
	return fc.regTop
}

/* FuncContext }}} */

func compileChunk(context *funcContext, chunk []ast.Stmt, untilFollows bool) { // {{{
	for i, stmt := range chunk {
		lastStmt := true
		for j := i + 1; j < len(chunk); j++ {
			_, ok := chunk[j].(*ast.LabelStmt)
			if !ok {
				lastStmt = false
				break
			}
		}
		compileStmt(context, stmt, lastStmt && !untilFollows)
	}
} // }}}

func compileBlock(context *funcContext, chunk []ast.Stmt) { // {{{
	if len(chunk) == 0 {
		return
	}
	ph := &ast.Node{}
	ph.SetLine(sline(chunk[0]))
	ph.SetLastLine(eline(chunk[len(chunk)-1]))
	context.EnterBlock(labelNoJump, ph)
	for i, stmt := range chunk {
		lastStmt := true
		for j := i + 1; j < len(chunk); j++ {
			_, ok := chunk[j].(*ast.LabelStmt)
			if !ok {
				lastStmt = false
				break
			}
		}
		compileStmt(context, stmt, lastStmt)
	}
	context.LeaveBlock()
} // }}}

// tickCompile calls the compile's tick: an interrupt ends the compile
// (CompileTick). (luarun)
func tickCompile(context *funcContext) {
	if context.tick != nil {
		if err := context.tick(); err != nil {
			panic(&parse.Interrupted{Err: err})
		}
	}
}

func compileStmt(context *funcContext, stmt ast.Stmt, isLastStmt bool) { // {{{
	tickCompile(context)
	context.line = sline(stmt)
	switch st := stmt.(type) {
	case *ast.AssignStmt:
		// (stored on the line of the last expression's last token, as
		// 5.1 stores after the explist) (luarun)
		compileAssignStmt(context, st, eline(st.Rhs[len(st.Rhs)-1]))
	case *ast.LocalAssignStmt:
		compileLocalAssignStmt(context, st)
	case *ast.FuncCallStmt:
		compileFuncCallExpr(context, context.RegTop(), st.Expr.(*ast.FuncCallExpr), ecnone(-1))
	case *ast.DoBlockStmt:
		context.EnterBlock(labelNoJump, blockLines(st, bodyEnd(st.BodyEnd, st)))
		compileChunk(context, st.Stmts, false)
		context.LeaveBlock()
	case *ast.WhileStmt:
		compileWhileStmt(context, st)
	case *ast.RepeatStmt:
		compileRepeatStmt(context, st)
	case *ast.FuncDefStmt:
		compileFuncDefStmt(context, st)
	case *ast.ReturnStmt:
		compileReturnStmt(context, st)
	case *ast.IfStmt:
		compileIfStmt(context, st)
	case *ast.BreakStmt:
		compileBreakStmt(context, st)
	case *ast.NumberForStmt:
		compileNumberForStmt(context, st)
	case *ast.GenericForStmt:
		compileGenericForStmt(context, st)
	case *ast.LabelStmt:
		compileLabelStmt(context, st, isLastStmt)
	case *ast.GotoStmt:
		compileGotoStmt(context, st)
	}
} // }}}

// assignTarget is one target of an assignment statement, resolved
// before any expression on the right is evaluated.
type assignTarget struct {
	kind  expContextType // ecLocal, ecUpvalue, ecGlobal or ecTable
	reg   int            // the local's register, or the indexed table's
	index int            // the upvalue's index or the global name's constant
	keyrk int            // ecTable: the key, a register or a constant (RK)
	keyks bool           // ecTable: the key is a constant string
}

// compileAssignStmt compiles `v1, ..., vn = e1, ..., em` as Lua 5.1 runs
// it (manual §2.4.3, lparser.c's restassign): the table and key of every
// indexed target are evaluated first, left to right, then every
// expression, left to right, into fresh registers, and only then are the
// targets assigned, last to first. gopher-lua assigned each target as
// soon as its expression was evaluated, so `a, b = b, a` gave `b, b`
// (luarun).
func compileAssignStmt(context *funcContext, stmt *ast.AssignStmt, storeLine int) { // {{{
	code := context.Code
	reg := context.RegTop()
	nvars, nexps := len(stmt.Lhs), len(stmt.Rhs)
	targets := make([]assignTarget, nvars)

	for i, lhs := range stmt.Lhs {
		tg := &targets[i]
		switch ex := lhs.(type) {
		case *ast.IdentExpr:
			tg.kind = getIdentRefType(context, context, ex)
			switch tg.kind {
			case ecLocal:
				tg.reg = context.FindLocalVar(ex.Value)
			case ecUpvalue:
				tg.index = context.upvalueIndex(ex.Value)
			case ecGlobal:
				tg.index = context.ConstIndex(LString(ex.Value))
			}
		case *ast.AttrGetExpr:
			tg.kind = ecTable
			compileExprWithMVPropagation(context, ex.Object, &reg, &tg.reg)
			compileExprWithKMVPropagation(context, ex.Key, &reg, &tg.keyrk)
			_, tg.keyks = ex.Key.(*ast.StringExpr)
		default:
			panic("invalid left expression.")
		}
	}

	// A local assigned in this statement may be the table or the key of
	// an indexed target to its left (`t[i], t = 1, 2`, `t[i], i = 1, 2`);
	// targets are assigned last to first, so that target gets a copy of
	// the local as it is now (lparser.c's check_conflict).
	for i := range targets {
		if targets[i].kind != ecLocal {
			continue
		}
		local := targets[i].reg
		copyreg := -1
		for j := 0; j < i; j++ {
			tg := &targets[j]
			if tg.kind != ecTable {
				continue
			}
			if tg.reg == local || (!opIsK(tg.keyrk) && tg.keyrk == local) {
				if copyreg < 0 {
					copyreg = reg
					reg++
					code.AddABC(OP_MOVE, copyreg, local, 0, sline(stmt.Lhs[i]))
				}
				if tg.reg == local {
					tg.reg = copyreg
				}
				if !opIsK(tg.keyrk) && tg.keyrk == local {
					tg.keyrk = copyreg
				}
			}
		}
	}

	base := reg
	if nexps == nvars {
		// every expression but the last into a register of its own; the
		// last one (adjusted to one value) straight into its target,
		// which is assigned first
		for i := 0; i < nexps-1; i++ {
			compileExpr(context, reg, stmt.Rhs[i], ecnone(0))
			reg++
		}
		compileAssignLast(context, &targets[nvars-1], stmt.Lhs[nvars-1], stmt.Rhs[nexps-1], reg, storeLine)
		for i := nvars - 2; i >= 0; i-- {
			storeAssignTarget(context, &targets[i], base+i, storeLine)
		}
		return
	}

	// fewer or more values than targets: every expression into
	// registers base.., the values adjusted to nvars (a last call or
	// '...' fills the targets left, nil the rest; extra values dropped)
	filled := 0
	for i, expr := range stmt.Rhs {
		switch {
		case i == nexps-1 && i < nvars && isVarArgReturnExpr(expr):
			want := nvars - i
			compileExpr(context, reg, expr, ecnone(want-1))
			reg += want
			filled = nvars
		case i == nexps-1 && i >= nvars:
			compileExpr(context, reg, expr, ecnone(-1))
		default:
			compileExpr(context, reg, expr, ecnone(0))
			reg++
			if filled < nvars {
				filled++
			}
		}
	}
	if filled < nvars {
		code.AddLoadNil(base+filled, base+nvars-1, context.nactvar(), sline(stmt.Lhs[filled]))
	}
	for i := nvars - 1; i >= 0; i-- {
		storeAssignTarget(context, &targets[i], base+i, storeLine)
	}
} // }}}

// compileAssignLast compiles the last expression of an assignment with as
// many expressions as targets straight into the last target, as Lua 5.1
// stores it (the other expressions are already in registers); reg is the
// first free register.
func compileAssignLast(context *funcContext, tg *assignTarget, lhs ast.Expr, expr ast.Expr, reg int, line int) { // {{{
	switch tg.kind {
	case ecLocal:
		if _, ok := expr.(*ast.Comma3Expr); ok {
			// VARARG sets the top of the registers after the values it
			// copies, dropping those above: it must write at the top
			compileExpr(context, reg, expr, ecnone(0))
			storeAssignTarget(context, tg, reg, line)
			return
		}
		// every other kind of expression compiled for a local leaves its
		// value in the local's register
		compileExpr(context, reg, expr, &expcontext{ecLocal, tg.reg, 0})
	case ecTable:
		valrk := reg
		compileExprWithKMVPropagation(context, expr, &reg, &valrk)
		storeAssignTarget(context, tg, valrk, line)
	default:
		compileExpr(context, reg, expr, ecnone(0))
		storeAssignTarget(context, tg, reg, line)
	}
} // }}}

// storeAssignTarget assigns the value in valrk (a register, or a constant
// for a table target) to tg.
func storeAssignTarget(context *funcContext, tg *assignTarget, valrk int, line int) { // {{{
	code := context.Code
	switch tg.kind {
	case ecLocal:
		if valrk != tg.reg {
			code.AddABC(OP_MOVE, tg.reg, valrk, 0, line)
		}
	case ecGlobal:
		code.AddABx(OP_SETGLOBAL, valrk, tg.index, line)
	case ecUpvalue:
		code.AddABC(OP_SETUPVAL, valrk, tg.index, 0, line)
	case ecTable:
		opcode := OP_SETTABLE
		if tg.keyks {
			opcode = OP_SETTABLEKS
		}
		code.AddABC(opcode, tg.reg, tg.keyrk, valrk, line)
	}
} // }}}

func compileRegAssignment(context *funcContext, names []string, exprs []ast.Expr, reg int, nvars int, line int) { // {{{
	lennames := len(names)
	lenexprs := len(exprs)
	namesassigned := 0
	ec := &expcontext{}

	for namesassigned < lennames && namesassigned < lenexprs {
		if isVarArgReturnExpr(exprs[namesassigned]) && (lenexprs-namesassigned-1) <= 0 {

			varargopt := nvars - namesassigned
			ecupdate(ec, ecVararg, reg, varargopt-1)
			compileExpr(context, reg, exprs[namesassigned], ec)
			reg += varargopt
			namesassigned = lennames
		} else {
			ecupdate(ec, ecLocal, reg, 0)
			compileExpr(context, reg, exprs[namesassigned], ec)
			reg += 1
			namesassigned += 1
		}
	}

	// extra left names
	if lennames > namesassigned {
		restleft := lennames - namesassigned - 1
		context.Code.AddLoadNil(reg, reg+restleft, context.nactvar(), line)
		reg += restleft
	}

	// extra right exprs
	for i := namesassigned; i < lenexprs; i++ {
		varargopt := -1
		if i != lenexprs-1 {
			varargopt = 0
		}
		ecupdate(ec, ecNone, reg, varargopt)
		reg += compileExpr(context, reg, exprs[i], ec)
	}
} // }}}

func compileLocalAssignStmt(context *funcContext, stmt *ast.LocalAssignStmt) { // {{{
	reg := context.RegTop()
	if stmt.Func {
		// local function f: f is in scope in its body (in `local f =
		// function`, which gopher-lua compiled the same way, it is not:
		// a use of f there is the f outside) (luarun)
		context.RegisterLocalVar(stmt.Names[0])
		compileRegAssignment(context, stmt.Names, stmt.Exprs, reg, len(stmt.Names), sline(stmt))
		return
	}

	compileRegAssignment(context, stmt.Names, stmt.Exprs, reg, len(stmt.Names), sline(stmt))
	for _, name := range stmt.Names {
		context.RegisterLocalVar(name)
	}
} // }}}

func compileReturnStmt(context *funcContext, stmt *ast.ReturnStmt) { // {{{
	lenexprs := len(stmt.Exprs)
	code := context.Code
	reg := context.RegTop()
	a := reg
	lastisvaarg := false
	// (on the line of the last token of the explist, as 5.1's) (luarun)
	line := sline(stmt)
	if lenexprs > 0 {
		line = eline(stmt.Exprs[lenexprs-1])
	}

	if lenexprs == 1 {
		switch ex := stmt.Exprs[0].(type) {
		case *ast.IdentExpr:
			if idx := context.FindLocalVar(ex.Value); idx > -1 {
				code.AddABC(OP_RETURN, idx, 2, 0, line)
				return
			}
		case *ast.FuncCallExpr:
			if ex.AdjustRet { // return (func())
				reg += compileExpr(context, reg, ex, ecnone(0))
			} else {
				reg += compileExpr(context, reg, ex, ecnone(-2))
				code.SetOpCode(code.LastPC(), OP_TAILCALL)
			}
			code.AddABC(OP_RETURN, a, 0, 0, line)
			return
		}
	}

	for i, expr := range stmt.Exprs {
		if i == lenexprs-1 && isVarArgReturnExpr(expr) {
			compileExpr(context, reg, expr, ecnone(-2))
			lastisvaarg = true
		} else {
			reg += compileExpr(context, reg, expr, ecnone(0))
		}
	}
	count := reg - a + 1
	if lastisvaarg {
		count = 0
	}
	context.Code.AddABC(OP_RETURN, a, count, 0, line)
} // }}}

func compileIfStmt(context *funcContext, stmt *ast.IfStmt) { // {{{
	thenlabel := context.NewLabel()
	elselabel := context.NewLabel()
	endlabel := context.NewLabel()

	compileBranchCondition(context, context.RegTop(), stmt.Condition, thenlabel, elselabel, false)
	context.SetLabelPc(thenlabel, context.Code.LastPC())
	compileBlock(context, stmt.Then)
	if len(stmt.Else) > 0 {
		// (on the line of the then part's last token, as 5.1's) (luarun)
		context.Code.AddASbx(OP_JMP, 0, endlabel, bodyEnd(stmt.ThenEnd, stmt))
	}
	context.SetLabelPc(elselabel, context.Code.LastPC())
	if len(stmt.Else) > 0 {
		compileBlock(context, stmt.Else)
		context.SetLabelPc(endlabel, context.Code.LastPC())
	}

} // }}}

func compileBranchCondition(context *funcContext, reg int, expr ast.Expr, thenlabel, elselabel int, hasnextcond bool) { // {{{
	// TODO folding constants?
	code := context.Code
	flip := 0
	jumplabel := elselabel
	if hasnextcond {
		flip = 1
		jumplabel = thenlabel
	}

	switch ex := expr.(type) {
	case *ast.FalseExpr, *ast.NilExpr:
		if !hasnextcond {
			code.AddASbx(OP_JMP, 0, elselabel, sline(expr))
			return
		}
	case *ast.TrueExpr, *ast.NumberExpr, *ast.StringExpr:
		if !hasnextcond {
			return
		}
	case *ast.UnaryNotOpExpr:
		compileBranchCondition(context, reg, ex.Expr, elselabel, thenlabel, !hasnextcond)
		return
	case *ast.LogicalOpExpr:
		switch ex.Operator {
		case "and":
			nextcondlabel := context.NewLabel()
			compileBranchCondition(context, reg, ex.Lhs, nextcondlabel, elselabel, false)
			context.SetLabelPc(nextcondlabel, context.Code.LastPC())
			compileBranchCondition(context, reg, ex.Rhs, thenlabel, elselabel, hasnextcond)
		case "or":
			nextcondlabel := context.NewLabel()
			compileBranchCondition(context, reg, ex.Lhs, thenlabel, nextcondlabel, true)
			context.SetLabelPc(nextcondlabel, context.Code.LastPC())
			compileBranchCondition(context, reg, ex.Rhs, thenlabel, elselabel, hasnextcond)
		}
		return
	case *ast.RelationalOpExpr:
		compileRelationalOpExprAux(context, reg, ex, flip, jumplabel)
		return
	}

	a := reg
	compileExprWithMVPropagation(context, expr, &reg, &a)
	code.AddABC(OP_TEST, a, 0, 0^flip, sline(expr))
	code.AddASbx(OP_JMP, 0, jumplabel, sline(expr))
} // }}}

func compileWhileStmt(context *funcContext, stmt *ast.WhileStmt) { // {{{
	thenlabel := context.NewLabel()
	elselabel := context.NewLabel()
	condlabel := context.NewLabel()

	context.SetLabelPc(condlabel, context.Code.LastPC())
	compileBranchCondition(context, context.RegTop(), stmt.Condition, thenlabel, elselabel, false)
	context.SetLabelPc(thenlabel, context.Code.LastPC())
	// (the jump back on the line of the body's last token, as 5.1's)
	// (luarun)
	end := bodyEnd(stmt.BodyEnd, stmt)
	context.EnterBlock(elselabel, blockLines(stmt, end))
	compileChunk(context, stmt.Stmts, false)
	context.CloseUpvalues()
	context.Code.AddASbx(OP_JMP, 0, condlabel, end)
	context.LeaveBlock()
	context.SetLabelPc(elselabel, context.Code.LastPC())
} // }}}

func compileRepeatStmt(context *funcContext, stmt *ast.RepeatStmt) { // {{{
	initlabel := context.NewLabel()
	thenlabel := context.NewLabel()
	elselabel := context.NewLabel()

	context.SetLabelPc(initlabel, context.Code.LastPC())
	context.SetLabelPc(elselabel, context.Code.LastPC())
	context.EnterBlock(thenlabel, stmt)
	compileChunk(context, stmt.Stmts, true)
	compileBranchCondition(context, context.RegTop(), stmt.Condition, thenlabel, elselabel, false)

	context.SetLabelPc(thenlabel, context.Code.LastPC())
	n := context.LeaveBlock()

	if n > -1 {
		label := context.NewLabel()
		context.Code.AddASbx(OP_JMP, 0, label, eline(stmt))
		context.SetLabelPc(elselabel, context.Code.LastPC())
		context.Code.AddABC(OP_CLOSE, n, 0, 0, eline(stmt))
		context.Code.AddASbx(OP_JMP, 0, initlabel, eline(stmt))
		context.SetLabelPc(label, context.Code.LastPC())
	}

} // }}}

func compileBreakStmt(context *funcContext, stmt *ast.BreakStmt) { // {{{
	for block := context.Block; block != nil; block = block.Parent {
		if label := block.BreakLabel; label != labelNoJump {
			if block.RefUpvalue {
				context.Code.AddABC(OP_CLOSE, block.Parent.LocalVars.LastIndex(), 0, 0, sline(stmt))
			}
			context.Code.AddASbx(OP_JMP, 0, label, sline(stmt))
			return
		}
	}
	raiseCompileError(context, sline(stmt), "no loop to break")
} // }}}

func compileFuncDefStmt(context *funcContext, stmt *ast.FuncDefStmt) { // {{{
	if stmt.Name.Func == nil {
		reg := context.RegTop()
		var treg, kreg int
		compileExprWithKMVPropagation(context, stmt.Name.Receiver, &reg, &treg)
		kreg = loadRk(context, &reg, stmt.Func, LString(stmt.Name.Method))
		compileExpr(context, reg, stmt.Func, ecfuncdef)
		context.Code.AddABC(OP_SETTABLE, treg, kreg, reg, sline(stmt.Name.Receiver))
	} else {
		astmt := &ast.AssignStmt{Lhs: []ast.Expr{stmt.Name.Func}, Rhs: []ast.Expr{stmt.Func}}
		astmt.SetLine(sline(stmt.Func))
		astmt.SetLastLine(eline(stmt.Func))
		// (stored on the line of `function`, 5.1's fixline) (luarun)
		compileAssignStmt(context, astmt, sline(stmt))
	}
} // }}}

func compileNumberForStmt(context *funcContext, stmt *ast.NumberForStmt) { // {{{
	code := context.Code
	endlabel := context.NewLabel()
	ec := &expcontext{}

	context.EnterBlock(endlabel, blockLines(stmt, bodyEnd(stmt.BodyEnd, stmt)))
	reg := context.RegTop()
	rindex := context.RegisterLocalVar("(for index)")
	ecupdate(ec, ecLocal, rindex, 0)
	compileExpr(context, reg, stmt.Init, ec)

	reg = context.RegTop()
	rlimit := context.RegisterLocalVar("(for limit)")
	ecupdate(ec, ecLocal, rlimit, 0)
	compileExpr(context, reg, stmt.Limit, ec)

	reg = context.RegTop()
	rstep := context.RegisterLocalVar("(for step)")
	if stmt.Step == nil {
		stmt.Step = &ast.NumberExpr{Value: "1"}
		stmt.Step.SetLine(sline(stmt.Init))
	}
	ecupdate(ec, ecLocal, rstep, 0)
	compileExpr(context, reg, stmt.Step, ec)

	code.AddASbx(OP_FORPREP, rindex, 0, sline(stmt))

	context.RegisterLocalVar(stmt.Name)

	bodypc := code.LastPC()
	compileChunk(context, stmt.Stmts, false)

	context.LeaveBlock()

	flpc := code.LastPC()
	code.AddASbx(OP_FORLOOP, rindex, bodypc-(flpc+1), sline(stmt))

	context.SetLabelPc(endlabel, code.LastPC())
	code.SetSbx(bodypc, flpc-bodypc)

} // }}}

// compileGenericForStmt compiles a generic for as the loop the Lua manual
// defines it by (luarun):
//
//	do
//	  local f, s, var = explist
//	  while true do
//	    local var_1, ..., var_n = f(s, var)
//	    if var_1 == nil then break end
//	    var = var_1
//	    do block end
//	  end
//	end
//
// so that the iterator is called by an ordinary CALL, which a coroutine
// can yield across (TFORLOOP calls it from Go, where a yield cannot
// pass): an iterator may make a blocking call. compileGenericForStmtTFor
// is gopher-lua's own.
func compileGenericForStmt(context *funcContext, stmt *ast.GenericForStmt) { // {{{
	if builtinIteration(stmt.Exprs) || slices.Contains(stmt.Names[1:], stmt.Names[0]) {
		// (a name repeated, "for _, _ in ...": the rewrite's test and
		// control would read the last one; TFORLOOP reads by position)
		// pairs(t), ipairs(t), next, t: Go iterators, which cannot block;
		// TFORLOOP runs them about 40% faster than a CALL
		compileGenericForStmtTFor(context, stmt)
		return
	}
	// (every instruction of the loop's own on the line of its explist, as
	// 5.1's TFORLOOP; the body's end is BodyEnd) (luarun)
	line := sline(stmt)
	at := func(n ast.PositionHolder) {
		n.SetLine(line)
		n.SetLastLine(line)
	}
	ident := func(name string) *ast.IdentExpr {
		e := &ast.IdentExpr{Value: name}
		at(e)
		return e
	}
	const gen, state, control = "(for generator)", "(for state)", "(for control)"
	call := &ast.FuncCallExpr{Func: ident(gen), Args: []ast.Expr{ident(state), ident(control)}}
	at(call)
	step := &ast.LocalAssignStmt{Names: stmt.Names, Exprs: []ast.Expr{call}}
	isNil := &ast.RelationalOpExpr{Operator: "==", Lhs: ident(stmt.Names[0]), Rhs: &ast.NilExpr{}}
	at(isNil)
	brk := &ast.BreakStmt{}
	stop := &ast.IfStmt{Condition: isNil, Then: []ast.Stmt{brk}}
	advance := &ast.AssignStmt{Lhs: []ast.Expr{ident(control)}, Rhs: []ast.Expr{ident(stmt.Names[0])}}
	body := &ast.DoBlockStmt{Stmts: stmt.Stmts, BodyEnd: stmt.BodyEnd}
	cond := &ast.TrueExpr{}
	// (the jump back on the body's last line, as 5.1's TFORLOOP jumps
	// back without a line of its own) (luarun)
	loop := &ast.WhileStmt{Condition: cond, Stmts: []ast.Stmt{step, stop, advance, body}, BodyEnd: stmt.BodyEnd}
	init := &ast.LocalAssignStmt{Names: []string{gen, state, control}, Exprs: stmt.Exprs}
	block := &ast.DoBlockStmt{Stmts: []ast.Stmt{init, loop}}
	for _, n := range []ast.PositionHolder{step, brk, stop, advance, body, cond, loop, init, block, isNil.Rhs} {
		at(n)
	}
	compileStmt(context, block, false)
} // }}}

// builtinIteration reports whether a generic for's explist is pairs(e),
// ipairs(e) or next, ...: the base library's iterators by their global
// names (luarun).
func builtinIteration(exprs []ast.Expr) bool {
	if len(exprs) == 0 {
		return false
	}
	if id, ok := exprs[0].(*ast.IdentExpr); ok && id.Value == "next" {
		return true
	}
	if call, ok := exprs[0].(*ast.FuncCallExpr); ok && len(exprs) == 1 && call.Receiver == nil {
		if id, ok := call.Func.(*ast.IdentExpr); ok {
			return id.Value == "pairs" || id.Value == "ipairs"
		}
	}
	return false
}

func compileGenericForStmtTFor(context *funcContext, stmt *ast.GenericForStmt) { // {{{
	code := context.Code
	endlabel := context.NewLabel()
	bodylabel := context.NewLabel()
	fllabel := context.NewLabel()
	nnames := len(stmt.Names)

	context.EnterBlock(endlabel, blockLines(stmt, bodyEnd(stmt.BodyEnd, stmt)))
	rgen := context.RegisterLocalVar("(for generator)")
	context.RegisterLocalVar("(for state)")
	context.RegisterLocalVar("(for control)")

	// the explist is adjusted to the three hidden variables, not to the
	// loop's names: with two names and "next, t", the control variable
	// was left as it was, and the loop started after a stale value
	// (luarun)
	compileRegAssignment(context, []string{"(for generator)", "(for state)", "(for control)"}, stmt.Exprs, context.RegTop()-3, 3, sline(stmt))

	code.AddASbx(OP_JMP, 0, fllabel, sline(stmt))

	for _, name := range stmt.Names {
		context.RegisterLocalVar(name)
	}

	context.SetLabelPc(bodylabel, code.LastPC())
	compileChunk(context, stmt.Stmts, false)

	context.LeaveBlock()

	context.SetLabelPc(fllabel, code.LastPC())
	code.AddABC(OP_TFORLOOP, rgen, 0, nnames, sline(stmt))
	code.AddASbx(OP_JMP, 0, bodylabel, sline(stmt))

	context.SetLabelPc(endlabel, code.LastPC())
} // }}}

func compileLabelStmt(context *funcContext, stmt *ast.LabelStmt, isLastStmt bool) { // {{{
	labelId := context.NewLabel()
	label := newLabelDesc(labelId, stmt.Name, context.Code.LastPC(), sline(stmt), context.BlockLocalVarsCount())
	context.AddNamedLabel(label)
	if isLastStmt {
		label.SetNumActiveLocalVars(context.Block.Parent.LocalVarsCount())
	}
	context.ResolveForwardGoto(label)
} // }}}

func compileGotoStmt(context *funcContext, stmt *ast.GotoStmt) { // {{{
	context.Code.AddABC(OP_CLOSE, 0, 0, 0, sline(stmt))
	context.Code.AddASbx(OP_JMP, 0, labelNoJump, sline(stmt))
	label := newLabelDesc(-1, stmt.Label, context.Code.LastPC(), sline(stmt), context.BlockLocalVarsCount())
	context.AddUnresolvedGoto(label)
	context.FindLabel(context.Block, label, context.gotosCount-1)
} // }}}

func compileExpr(context *funcContext, reg int, expr ast.Expr, ec *expcontext) int { // {{{
	tickCompile(context)
	code := context.Code
	sreg := savereg(ec, reg)
	sused := 1
	if sreg < reg {
		sused = 0
	}

	switch ex := expr.(type) {
	case *ast.StringExpr:
		code.AddABx(OP_LOADK, sreg, context.ConstIndex(LString(ex.Value)), eline(ex)) // (luarun: a long string's last line)
		return sused
	case *ast.NumberExpr:
		num, err := parseNumber(ex.Value)
		if err != nil {
			num = LNumber(math.NaN())
		}
		code.AddABx(OP_LOADK, sreg, context.ConstIndex(num), sline(ex))
		return sused
	case *constLValueExpr:
		code.AddABx(OP_LOADK, sreg, context.ConstIndex(ex.Value), sline(ex))
		return sused
	case *ast.NilExpr:
		code.AddLoadNil(sreg, sreg, context.nactvar(), sline(ex))
		return sused
	case *ast.FalseExpr:
		code.AddABC(OP_LOADBOOL, sreg, 0, 0, sline(ex))
		return sused
	case *ast.TrueExpr:
		code.AddABC(OP_LOADBOOL, sreg, 1, 0, sline(ex))
		return sused
	case *ast.IdentExpr:
		switch getIdentRefType(context, context, ex) {
		case ecGlobal:
			code.AddABx(OP_GETGLOBAL, sreg, context.ConstIndex(LString(ex.Value)), sline(ex))
		case ecUpvalue:
			code.AddABC(OP_GETUPVAL, sreg, context.upvalueIndex(ex.Value), 0, sline(ex))
		case ecLocal:
			b := context.FindLocalVar(ex.Value)
			code.AddABC(OP_MOVE, sreg, b, 0, sline(ex))
		}
		return sused
	case *ast.Comma3Expr:
		if context.Proto.IsVarArg == 0 {
			raiseCompileError(context, sline(ex), "cannot use '...' outside a vararg function")
		}
		context.Proto.IsVarArg &= ^VarArgNeedsArg
		code.AddABC(OP_VARARG, sreg, 2+ec.varargopt, 0, sline(ex))
		if context.RegTop() > (sreg+2+ec.varargopt) || ec.varargopt < -1 {
			return 0
		}
		return (sreg + 1 + ec.varargopt) - reg
	case *ast.AttrGetExpr:
		a := sreg
		b := reg
		compileExprWithMVPropagation(context, ex.Object, &reg, &b)
		c := reg
		compileExprWithKMVPropagation(context, ex.Key, &reg, &c)
		opcode := OP_GETTABLE
		if _, ok := ex.Key.(*ast.StringExpr); ok {
			opcode = OP_GETTABLEKS
		}
		code.AddABC(opcode, a, b, c, sline(ex))
		return sused
	case *ast.TableExpr:
		compileTableExpr(context, reg, ex, ec)
		return 1
	case *ast.ArithmeticOpExpr:
		compileArithmeticOpExpr(context, reg, ex, ec)
		return sused
	case *ast.StringConcatOpExpr:
		compileStringConcatOpExpr(context, reg, ex, ec)
		return sused
	case *ast.UnaryMinusOpExpr, *ast.UnaryNotOpExpr, *ast.UnaryLenOpExpr:
		compileUnaryOpExpr(context, reg, ex, ec)
		return sused
	case *ast.RelationalOpExpr:
		compileRelationalOpExpr(context, reg, ex, ec)
		return sused
	case *ast.LogicalOpExpr:
		compileLogicalOpExpr(context, reg, ex, ec)
		return sused
	case *ast.FuncCallExpr:
		return compileFuncCallExpr(context, reg, ex, ec)
	case *ast.FunctionExpr:
		childcontext := newFuncContext(context.Proto.SourceName, context)
		compileFunctionExpr(childcontext, ex, ec)
		protono := len(context.Proto.FunctionPrototypes)
		context.Proto.FunctionPrototypes = append(context.Proto.FunctionPrototypes, childcontext.Proto)
		// (on the line of the body's `end`, where 5.1 emits it, after
		// the body) (luarun)
		code.AddABx(OP_CLOSURE, sreg, protono, eline(ex))
		for _, upvalue := range childcontext.Upvalues.List() {
			localidx, block := context.FindLocalVarAndBlock(upvalue.Name)
			if localidx > -1 {
				code.AddABC(OP_MOVE, 0, localidx, 0, eline(ex))
				block.RefUpvalue = true
			} else {
				upvalueidx := context.Upvalues.Find(upvalue.Name)
				if upvalueidx < 0 {
					upvalueidx = context.upvalueIndex(upvalue.Name)
				}
				code.AddABC(OP_GETUPVAL, 0, upvalueidx, 0, eline(ex))
			}
		}
		return sused
	default:
		panic(fmt.Sprintf("expr %v not implemented.", reflect.TypeOf(ex).Elem().Name()))
	}

} // }}}

func compileExprWithPropagation(context *funcContext, expr ast.Expr, reg *int, save *int, propergator func(int, *int, *int, int)) { // {{{
	reginc := compileExpr(context, *reg, expr, ecnone(0))
	if _, ok := expr.(*ast.LogicalOpExpr); ok {
		*save = *reg
		*reg = *reg + reginc
	} else {
		propergator(context.RegTop(), save, reg, reginc)
	}
} // }}}

func compileExprWithKMVPropagation(context *funcContext, expr ast.Expr, reg *int, save *int) { // {{{
	compileExprWithPropagation(context, expr, reg, save, context.Code.PropagateKMV)
} // }}}

func compileExprWithMVPropagation(context *funcContext, expr ast.Expr, reg *int, save *int) { // {{{
	compileExprWithPropagation(context, expr, reg, save, context.Code.PropagateMV)
} // }}}

func constFold(exp ast.Expr) ast.Expr { // {{{
	switch expr := exp.(type) {
	case *ast.ArithmeticOpExpr:
		lvalue, lisconst := lnumberValue(constFold(expr.Lhs))
		rvalue, risconst := lnumberValue(constFold(expr.Rhs))
		if !lisconst || !risconst {
			return expr
		}
		// 5.1's constfolding leaves a division or modulo by zero and a
		// NaN result to run time (luarun): 1/0 divides by the chunk's
		// constant 0, which is -0 where -0 came first
		var r LNumber
		switch expr.Operator {
		case "+":
			r = lvalue + rvalue
		case "-":
			r = lvalue - rvalue
		case "*":
			r = lvalue * rvalue
		case "/", "%":
			if rvalue == 0 {
				return expr
			}
			if expr.Operator == "/" {
				r = lvalue / rvalue
			} else {
				r = luaModulo(lvalue, rvalue)
			}
		case "^":
			r = LNumber(math.Pow(float64(lvalue), float64(rvalue)))
		default:
			panic(fmt.Sprintf("unknown binop: %v", expr.Operator))
		}
		if math.IsNaN(float64(r)) {
			return expr
		}
		return &constLValueExpr{Value: r}
	case *ast.UnaryMinusOpExpr:
		expr.Expr = constFold(expr.Expr)
		if value, ok := lnumberValue(expr.Expr); ok {
			return &constLValueExpr{Value: LNumber(-value)}
		}
		return expr
	default:

		return exp
	}
} // }}}

func compileFunctionExpr(context *funcContext, funcexpr *ast.FunctionExpr, ec *expcontext) { // {{{
	context.Proto.LineDefined = sline(funcexpr)
	context.Proto.LastLineDefined = eline(funcexpr)
	context.line = context.Proto.LineDefined
	// (more than 200 parameters are 5.1's "more than 200 local
	// variables": RegisterLocalVar)
	context.Proto.NumParameters = uint8(len(funcexpr.ParList.Names))
	if ec.ctype == ecMethod {
		context.Proto.NumParameters += 1
		context.RegisterLocalVar("self")
	}
	for _, name := range funcexpr.ParList.Names {
		context.RegisterLocalVar(name)
	}
	if funcexpr.ParList.HasVargs {
		// (the main chunk has no arg table, as in 5.1: it had one in
		// register 0, which AddLoadNil takes for nil at the start)
		// (luarun)
		if CompatVarArg && context.Parent != nil {
			context.Proto.IsVarArg = VarArgHasArg | VarArgNeedsArg
			context.RegisterLocalVar("arg")
		}
		context.Proto.IsVarArg |= VarArgIsVarArg
	}

	compileChunk(context, funcexpr.Stmts, false)

	context.Code.AddABC(OP_RETURN, 0, 1, 0, eline(funcexpr))
	context.EndScope()
	context.CheckUnresolvedGoto()
	context.Proto.Code = context.Code.List()
	context.Proto.DbgSourcePositions = context.Code.PosList()
	context.Proto.DbgUpvalues = context.Upvalues.Names()
	context.Proto.NumUpvalues = uint8(len(context.Proto.DbgUpvalues))
	for _, clv := range context.Proto.Constants {
		sv := ""
		if slv, ok := clv.(LString); ok {
			sv = string(slv)
		}
		context.Proto.stringConstants = append(context.Proto.stringConstants, sv)
		context.Proto.stringHashes = append(context.Proto.stringHashes, strHash(sv))
	}
	patchCode(context)
} // }}}

func compileTableExpr(context *funcContext, reg int, ex *ast.TableExpr, ec *expcontext) { // {{{
	code := context.Code
	/*
		tablereg := savereg(ec, reg)
		if tablereg == reg {
			reg += 1
		}
	*/
	tablereg := reg
	reg++
	code.AddABC(OP_NEWTABLE, tablereg, 0, 0, sline(ex))
	tablepc := code.LastPC()
	regbase := reg

	arraycount := 0
	pending := 0 // array items in registers regbase.. not yet stored
	lastvararg := false
	for i, field := range ex.Fields {
		islast := i == len(ex.Fields)-1
		if field.Key == nil {
			if islast && isVarArgReturnExpr(field.Value) {
				compileExpr(context, reg, field.Value, ecnone(-2))
				lastvararg = true
			} else {
				reg += compileExpr(context, reg, field.Value, ecnone(0))
				arraycount++
				pending++
			}
		} else {
			regorg := reg
			b := reg
			compileExprWithKMVPropagation(context, field.Key, &reg, &b)
			c := reg
			compileExprWithKMVPropagation(context, field.Value, &reg, &c)
			opcode := OP_SETTABLE
			if _, ok := field.Key.(*ast.StringExpr); ok {
				opcode = OP_SETTABLEKS
			}
			code.AddABC(opcode, tablereg, b, c, sline(ex))
			reg = regorg
		}
		// store the pending items when there are FieldsPerFlush of them
		// (only after an array item: gopher-lua stored again after a keyed
		// field that followed the 50th, from registers the field had
		// overwritten) and at the end (luarun)
		if pending == FieldsPerFlush || (islast && (pending > 0 || lastvararg)) {
			b := pending
			items := arraycount
			if lastvararg {
				b = 0 // up to the top
				items++
			}
			// the block the pending items start in: 1 for 1..50 (a
			// last call counts as an item: it was left out, so after a
			// multiple of 50 items its values overwrote the last 50)
			c := (items-1)/FieldsPerFlush + 1
			line := field.Value
			if field.Key != nil {
				line = field.Key
			}
			if c > opMaxArgsC {
				// Lua 5.1's way: C is 0 and the block number is the next
				// word (gopher-lua wrote 0 there, so item 25,551 on went to
				// keys -49.. and the tail was lost) (luarun)
				code.AddABC(OP_SETLIST, tablereg, b, 0, sline(line))
				code.AddData(uint32(c), sline(line))
			} else {
				code.AddABC(OP_SETLIST, tablereg, b, c, sline(line))
			}
			reg = regbase
			pending = 0
		}
	}
	code.SetB(tablepc, int2Fb(arraycount))
	// the keyed fields (a last call or ... is not one: 5.1 counts it
	// with neither, luarun)
	hashcount := len(ex.Fields) - arraycount
	if lastvararg {
		hashcount--
	}
	code.SetC(tablepc, int2Fb(hashcount))
	if shouldmove(ec, tablereg) {
		code.AddABC(OP_MOVE, ec.reg, tablereg, 0, sline(ex))
	}
} // }}}

func compileArithmeticOpExpr(context *funcContext, reg int, expr *ast.ArithmeticOpExpr, ec *expcontext) { // {{{
	exp := constFold(expr)
	if ex, ok := exp.(*constLValueExpr); ok {
		exp.SetLine(sline(expr))
		compileExpr(context, reg, ex, ec)
		return
	}
	expr, _ = exp.(*ast.ArithmeticOpExpr)
	a := savereg(ec, reg)
	b := reg
	compileExprWithKMVPropagation(context, expr.Lhs, &reg, &b)
	c := reg
	compileExprWithKMVPropagation(context, expr.Rhs, &reg, &c)

	op := 0
	switch expr.Operator {
	case "+":
		op = OP_ADD
	case "-":
		op = OP_SUB
	case "*":
		op = OP_MUL
	case "/":
		op = OP_DIV
	case "%":
		op = OP_MOD
	case "^":
		op = OP_POW
	}
	// (an operation on the line its right operand ends on, as 5.1
	// emits it there) (luarun)
	context.Code.AddABC(op, a, b, c, eline(expr))
} // }}}

func compileStringConcatOpExpr(context *funcContext, reg int, expr *ast.StringConcatOpExpr, ec *expcontext) { // {{{
	code := context.Code
	crange := 1
	for current := expr.Rhs; current != nil; {
		if ex, ok := current.(*ast.StringConcatOpExpr); ok {
			crange += 1
			current = ex.Rhs
		} else {
			current = nil
		}
	}
	a := savereg(ec, reg)
	basereg := reg
	reg += compileExpr(context, reg, expr.Lhs, ecnone(0))
	reg += compileExpr(context, reg, expr.Rhs, ecnone(0))
	for pc := code.LastPC(); pc != 0 && opGetOpCode(code.At(pc)) == OP_CONCAT; pc-- {
		code.Pop()
	}
	code.AddABC(OP_CONCAT, a, basereg, basereg+crange, eline(expr)) // (luarun: eline)
} // }}}

func compileUnaryOpExpr(context *funcContext, reg int, expr ast.Expr, ec *expcontext) { // {{{
	opcode := 0
	code := context.Code
	var operandexpr ast.Expr
	switch ex := expr.(type) {
	case *ast.UnaryMinusOpExpr:
		exp := constFold(ex)
		if lvexpr, ok := exp.(*constLValueExpr); ok {
			exp.SetLine(sline(expr))
			compileExpr(context, reg, lvexpr, ec)
			return
		}
		ex, _ = exp.(*ast.UnaryMinusOpExpr)
		operandexpr = ex.Expr
		opcode = OP_UNM
	case *ast.UnaryNotOpExpr:
		switch ex.Expr.(type) {
		case *ast.TrueExpr:
			code.AddABC(OP_LOADBOOL, savereg(ec, reg), 0, 0, sline(expr))
			return
		case *ast.FalseExpr, *ast.NilExpr:
			code.AddABC(OP_LOADBOOL, savereg(ec, reg), 1, 0, sline(expr))
			return
		default:
			opcode = OP_NOT
			operandexpr = ex.Expr
		}
	case *ast.UnaryLenOpExpr:
		opcode = OP_LEN
		operandexpr = ex.Expr
	}

	a := savereg(ec, reg)
	b := reg
	compileExprWithMVPropagation(context, operandexpr, &reg, &b)
	code.AddABC(opcode, a, b, 0, eline(expr)) // (luarun: eline)
} // }}}

func compileRelationalOpExprAux(context *funcContext, reg int, expr *ast.RelationalOpExpr, flip int, label int) { // {{{
	code := context.Code
	b := reg
	compileExprWithKMVPropagation(context, expr.Lhs, &reg, &b)
	c := reg
	compileExprWithKMVPropagation(context, expr.Rhs, &reg, &c)
	// (on the line the right operand ends on, as 5.1's) (luarun)
	switch expr.Operator {
	case "<":
		code.AddABC(OP_LT, 0^flip, b, c, eline(expr))
	case ">":
		code.AddABC(OP_LT, 0^flip, c, b, eline(expr))
	case "<=":
		code.AddABC(OP_LE, 0^flip, b, c, eline(expr))
	case ">=":
		code.AddABC(OP_LE, 0^flip, c, b, eline(expr))
	case "==":
		code.AddABC(OP_EQ, 0^flip, b, c, eline(expr))
	case "~=":
		code.AddABC(OP_EQ, 1^flip, b, c, eline(expr))
	}
	code.AddASbx(OP_JMP, 0, label, eline(expr))
} // }}}

func compileRelationalOpExpr(context *funcContext, reg int, expr *ast.RelationalOpExpr, ec *expcontext) { // {{{
	a := savereg(ec, reg)
	code := context.Code
	jumplabel := context.NewLabel()
	compileRelationalOpExprAux(context, reg, expr, 1, jumplabel)
	code.AddABC(OP_LOADBOOL, a, 0, 1, eline(expr))
	context.SetLabelPc(jumplabel, code.LastPC())
	code.AddABC(OP_LOADBOOL, a, 1, 0, eline(expr))
} // }}}

func compileLogicalOpExpr(context *funcContext, reg int, expr *ast.LogicalOpExpr, ec *expcontext) { // {{{
	a := savereg(ec, reg)
	code := context.Code
	endlabel := context.NewLabel()
	lb := &lblabels{context.NewLabel(), context.NewLabel(), endlabel, false}
	nextcondlabel := context.NewLabel()
	if expr.Operator == "and" {
		compileLogicalOpExprAux(context, reg, expr.Lhs, ec, nextcondlabel, endlabel, false, lb)
		context.SetLabelPc(nextcondlabel, code.LastPC())
		compileLogicalOpExprAux(context, reg, expr.Rhs, ec, endlabel, endlabel, false, lb)
	} else {
		compileLogicalOpExprAux(context, reg, expr.Lhs, ec, endlabel, nextcondlabel, true, lb)
		context.SetLabelPc(nextcondlabel, code.LastPC())
		compileLogicalOpExprAux(context, reg, expr.Rhs, ec, endlabel, endlabel, false, lb)
	}

	if lb.b {
		context.SetLabelPc(lb.f, code.LastPC())
		code.AddABC(OP_LOADBOOL, a, 0, 1, sline(expr))
		context.SetLabelPc(lb.t, code.LastPC())
		code.AddABC(OP_LOADBOOL, a, 1, 0, sline(expr))
	}

	lastinst := code.Last()
	if opGetOpCode(lastinst) == OP_JMP && opGetArgSbx(lastinst) == endlabel {
		code.Pop()
	}

	context.SetLabelPc(endlabel, code.LastPC())
} // }}}

func compileLogicalOpExprAux(context *funcContext, reg int, expr ast.Expr, ec *expcontext, thenlabel, elselabel int, hasnextcond bool, lb *lblabels) { // {{{
	// TODO folding constants?
	code := context.Code
	flip := 0
	jumplabel := elselabel
	if hasnextcond {
		flip = 1
		jumplabel = thenlabel
	}

	switch ex := expr.(type) {
	case *ast.FalseExpr:
		if elselabel == lb.e {
			code.AddASbx(OP_JMP, 0, lb.f, sline(expr))
			lb.b = true
		} else {
			code.AddASbx(OP_JMP, 0, elselabel, sline(expr))
		}
		return
	case *ast.NilExpr:
		if elselabel == lb.e {
			compileExpr(context, reg, expr, ec)
			code.AddASbx(OP_JMP, 0, lb.e, sline(expr))
		} else {
			code.AddASbx(OP_JMP, 0, elselabel, sline(expr))
		}
		return
	case *ast.TrueExpr:
		if thenlabel == lb.e {
			code.AddASbx(OP_JMP, 0, lb.t, sline(expr))
			lb.b = true
		} else {
			code.AddASbx(OP_JMP, 0, thenlabel, sline(expr))
		}
		return
	case *ast.NumberExpr, *ast.StringExpr:
		if thenlabel == lb.e {
			compileExpr(context, reg, expr, ec)
			code.AddASbx(OP_JMP, 0, lb.e, sline(expr))
		} else {
			code.AddASbx(OP_JMP, 0, thenlabel, sline(expr))
		}
		return
	case *ast.LogicalOpExpr:
		switch ex.Operator {
		case "and":
			nextcondlabel := context.NewLabel()
			compileLogicalOpExprAux(context, reg, ex.Lhs, ec, nextcondlabel, elselabel, false, lb)
			context.SetLabelPc(nextcondlabel, context.Code.LastPC())
			compileLogicalOpExprAux(context, reg, ex.Rhs, ec, thenlabel, elselabel, hasnextcond, lb)
		case "or":
			nextcondlabel := context.NewLabel()
			compileLogicalOpExprAux(context, reg, ex.Lhs, ec, thenlabel, nextcondlabel, true, lb)
			context.SetLabelPc(nextcondlabel, context.Code.LastPC())
			compileLogicalOpExprAux(context, reg, ex.Rhs, ec, thenlabel, elselabel, hasnextcond, lb)
		}
		return
	case *ast.RelationalOpExpr:
		if thenlabel == elselabel {
			flip ^= 1
			jumplabel = lb.t
			lb.b = true
		} else if thenlabel == lb.e {
			jumplabel = lb.t
			lb.b = true
		} else if elselabel == lb.e {
			jumplabel = lb.f
			lb.b = true
		}
		compileRelationalOpExprAux(context, reg, ex, flip, jumplabel)
		return
	}

	a := reg
	sreg := savereg(ec, a)
	isLastAnd := elselabel == lb.e && thenlabel != elselabel
	isLastOr := thenlabel == lb.e && hasnextcond

	if ident, ok := expr.(*ast.IdentExpr); ok && (isLastAnd || isLastOr) && getIdentRefType(context, context, ident) == ecLocal {
		b := context.FindLocalVar(ident.Value)
		op := OP_TESTSET
		if sreg == b {
			op = OP_TEST
		}
		code.AddABC(op, sreg, b, 0^flip, sline(expr))
	} else if !hasnextcond && thenlabel == elselabel {
		reg += compileExpr(context, reg, expr, &expcontext{ec.ctype, intMax(a, sreg), ec.varargopt})
		last := context.Code.Last()
		if opGetOpCode(last) == OP_MOVE && opGetArgA(last) == a {
			context.Code.SetA(context.Code.LastPC(), sreg)
		} else {
			context.Code.AddABC(OP_MOVE, sreg, a, 0, sline(expr))
		}
	} else {
		reg += compileExpr(context, reg, expr, ecnone(0))
		if !hasnextcond {
			code.AddABC(OP_TEST, a, 0, 0^flip, sline(expr))
		} else {
			code.AddABC(OP_TESTSET, sreg, a, 0^flip, sline(expr))
		}
	}
	code.AddASbx(OP_JMP, 0, jumplabel, sline(expr))
} // }}}

func compileFuncCallExpr(context *funcContext, reg int, expr *ast.FuncCallExpr, ec *expcontext) int { // {{{
	funcreg := reg
	argc := len(expr.Args)
	islastvararg := false
	name := "(anonymous)"

	if expr.Func != nil { // hoge.func()
		reg += compileExpr(context, reg, expr.Func, ecnone(0))
		name = getExprName(context, expr.Func)
	} else { // hoge:method()
		b := reg
		compileExprWithMVPropagation(context, expr.Receiver, &reg, &b)
		c := loadRk(context, &reg, expr, LString(expr.Method))
		context.Code.AddABC(OP_SELF, funcreg, b, c, sline(expr))
		// increments a register for an implicit "self"
		reg = b + 1
		reg2 := funcreg + 2
		if reg2 > reg {
			reg = reg2
		}
		argc += 1
		name = string(expr.Method)
	}

	for i, ar := range expr.Args {
		islastvararg = (i == len(expr.Args)-1) && isVarArgReturnExpr(ar)
		if islastvararg {
			compileExpr(context, reg, ar, ecnone(-2))
		} else {
			reg += compileExpr(context, reg, ar, ecnone(0))
		}
	}
	b := argc + 1
	if islastvararg {
		b = 0
	}
	context.Code.AddABC(OP_CALL, funcreg, b, ec.varargopt+2, sline(expr))
	context.Proto.DbgCalls = append(context.Proto.DbgCalls, DbgCall{Pc: context.Code.LastPC(), Name: name})

	if ec.varargopt == 0 && shouldmove(ec, funcreg) {
		context.Code.AddABC(OP_MOVE, ec.reg, funcreg, 0, sline(expr))
		return 1
	}
	if context.RegTop() > (funcreg+2+ec.varargopt) || ec.varargopt < -1 {
		return 0
	}
	return ec.varargopt + 1
} // }}}

func loadRk(context *funcContext, reg *int, expr ast.Expr, cnst LValue) int { // {{{
	cindex := context.ConstIndex(cnst)
	if cindex <= opMaxIndexRk {
		return opRkAsk(cindex)
	} else {
		ret := *reg
		*reg++
		context.Code.AddABx(OP_LOADK, ret, cindex, sline(expr))
		return ret
	}
} // }}}

func getIdentRefType(context *funcContext, current *funcContext, expr *ast.IdentExpr) expContextType { // {{{
	if current == nil {
		return ecGlobal
	} else if current.FindLocalVar(expr.Value) > -1 {
		if current == context {
			return ecLocal
		}
		return ecUpvalue
	}
	return getIdentRefType(context, current.Parent, expr)
} // }}}

func getExprName(context *funcContext, expr ast.Expr) string { // {{{
	switch ex := expr.(type) {
	case *ast.IdentExpr:
		return ex.Value
	case *ast.AttrGetExpr:
		switch kex := ex.Key.(type) {
		case *ast.StringExpr:
			return kex.Value
		}
		return "?"
	}
	return "?"
} // }}}

func patchCode(context *funcContext) { // {{{
	maxreg := 1
	if np := int(context.Proto.NumParameters); np > 1 {
		maxreg = np
	}
	moven := 0
	dataword := false
	code := context.Code.List()
	lines := context.Code.PosList()
	for pc := 0; pc < len(code); pc++ {
		inst := code[pc]
		curop := opGetOpCode(inst)
		switch curop {
		case OP_CLOSURE:
			pc += int(context.Proto.FunctionPrototypes[opGetArgBx(inst)].NumUpvalues)
			moven = 0
			continue
		case OP_SETGLOBAL, OP_SETUPVAL, OP_EQ, OP_LT, OP_LE, OP_TEST,
			OP_TAILCALL, OP_RETURN, OP_FORPREP, OP_FORLOOP, OP_CLOSE:
			/* nothing to do */
		case OP_SETLIST:
			// with C 0, the next word is SETLIST's block number, not an
			// instruction: skipped below (luarun)
			dataword = opGetArgC(inst) == 0
		case OP_TFORLOOP:
			// the call's copies of the generator, state and control at
			// A+3..A+5, its results at A+3..A+2+C (luarun)
			if reg := opGetArgA(inst) + 2 + intMax(3, opGetArgC(inst)); reg > maxreg {
				maxreg = reg
			}
		case OP_CALL:
			if reg := opGetArgA(inst) + opGetArgC(inst) - 2; reg > maxreg {
				maxreg = reg
			}
		case OP_VARARG:
			if reg := opGetArgA(inst) + opGetArgB(inst) - 1; reg > maxreg {
				maxreg = reg
			}
		case OP_SELF:
			if reg := opGetArgA(inst) + 1; reg > maxreg {
				maxreg = reg
			}
		case OP_LOADNIL:
			if reg := opGetArgB(inst); reg > maxreg {
				maxreg = reg
			}
		case OP_JMP: // jump to jump optimization
			distance := 0
			count := 0 // avoiding infinite loops
			for jmp := inst; opGetOpCode(jmp) == OP_JMP && count < 5; jmp = context.Code.At(pc + distance + 1) {
				d := context.GetLabelPc(opGetArgSbx(jmp)) - pc
				if d > opMaxArgSbx {
					if distance == 0 {
						raiseCompileError(context, context.Proto.LineDefined, "too long to jump.")
					}
					break
				}
				distance = d
				count++
			}
			if distance == 0 {
				context.Code.SetOpCode(pc, OP_NOP)
			} else {
				context.Code.SetSbx(pc, distance)
			}
		default:
			if reg := opGetArgA(inst); reg > maxreg {
				maxreg = reg
			}
		}

		// bulk move optimization(reducing op dipatch costs)
		flushMoven := func() {
			if moven > 1 {
				context.Code.SetOpCode(pc-moven, OP_MOVEN)
				context.Code.SetC(pc-moven, intMin(moven-1, opMaxArgsC))
			}
			moven = 0
		}
		if curop == OP_MOVE && moven > 0 && lines[pc] != lines[pc-moven] {
			// a MOVEN is one instruction to a line hook: a run of
			// MOVEs ends where the line changes (luarun)
			flushMoven()
		}
		if curop == OP_MOVE {
			moven++
		} else {
			flushMoven()
		}
		if dataword {
			pc++
			dataword = false
		}
	}
	maxreg = max(maxreg, context.Code.nilTop) // (luarun: AddLoadNil)
	maxreg++
	if maxreg > maxRegisters {
		raiseCompileError(context, context.line, "function or expression too complex")
	}
	context.Proto.NumUsedRegisters = uint8(maxreg)
} // }}}

func Compile(chunk []ast.Stmt, name string) (proto *FunctionProto, err error) { // {{{
	return CompileTick(chunk, name, nil)
}

// CompileTick is Compile calling tick (if not nil) before every
// statement and expression: a non-nil error from it ends the compile
// with that error as a *parse.Interrupted. (luarun)
func CompileTick(chunk []ast.Stmt, name string, tick func() error) (proto *FunctionProto, err error) {
	defer func() {
		if rcv := recover(); rcv != nil {
			if ie, ok := rcv.(*parse.Interrupted); ok {
				err = ie
			} else if _, ok := rcv.(*CompileError); ok {
				err = rcv.(error)
			} else {
				panic(rcv)
			}
		}
	}()
	err = nil
	parlist := &ast.ParList{HasVargs: true, Names: []string{}}
	funcexpr := &ast.FunctionExpr{ParList: parlist, Stmts: chunk}
	// the final RETURN is on the line of the chunk's last token (the
	// parser's LastLine of its last statement), 1 for an empty chunk, as
	// 5.1's close_func puts it (luarun: it was the line after)
	funcexpr.SetLastLine(1)
	if len(chunk) > 0 {
		funcexpr.SetLastLine(eline(chunk[len(chunk)-1]))
	}
	context := newFuncContext(name, nil)
	context.tick = tick
	compileFunctionExpr(context, funcexpr, ecnone(0))
	proto = context.Proto
	return
} // }}}
