package lua

// luarun: error messages that name the value they are about, as Lua 5.1's
// do (ldebug.c's getobjname, luaG_typeerror): "attempt to call global
// 'foo' (a nil value)", "attempt to index local 't' (a nil value)".
// The name comes from the bytecode: a register that is an active local
// is named by the proto's DbgLocals; otherwise the last instruction
// before the current one that set the register (outside any code a jump
// may skip) says where its value came from — a global, a field, an
// upvalue, a method, or a MOVE from another register, followed back.

import "strings"

// localName is the name of the local held in register reg (0-based) at
// instruction pc, as 5.1's luaF_getlocalname: the reg-th local whose
// scope covers pc.
func localName(p *FunctionProto, reg, pc int) (string, bool) {
	n := reg + 1
	for _, l := range p.DbgLocals {
		if l.StartPc > pc {
			break
		}
		if pc <= l.EndPc { // gopher-lua's EndPc is the last pc in scope (5.1's is past it)
			n--
			if n == 0 {
				return l.Name, true
			}
		}
	}
	return "", false
}

// findSetReg is the index of the last instruction before lastpc that set
// register reg, or -1 when there is none or it is inside code a forward
// jump before lastpc may skip (its value then depends on the path).
func findSetReg(p *FunctionProto, lastpc, reg int) int {
	setreg, jmptarget := -1, 0
	set := func(pc int) {
		if pc < jmptarget {
			setreg = -1
		} else {
			setreg = pc
		}
	}
	code := p.Code
	for pc := 0; pc < lastpc && pc < len(code); pc++ {
		inst := code[pc]
		a := opGetArgA(inst)
		switch op := opGetOpCode(inst); op {
		case OP_LOADNIL:
			if a <= reg && reg <= opGetArgB(inst) {
				set(pc)
			}
		case OP_TFORLOOP:
			if reg >= a+2 {
				set(pc)
			}
		case OP_CALL, OP_TAILCALL, OP_VARARG:
			if reg >= a {
				set(pc)
			}
		case OP_SELF:
			if reg == a || reg == a+1 {
				set(pc)
			}
		case OP_JMP:
			if dest := pc + 1 + opGetArgSbx(inst); pc < dest && dest <= lastpc && dest > jmptarget {
				jmptarget = dest
			}
		case OP_CLOSURE:
			if reg == a {
				set(pc)
			}
			// the pseudo-instructions naming its upvalues are not run
			if bx := opGetArgBx(inst); bx < len(p.FunctionPrototypes) {
				pc += int(p.FunctionPrototypes[bx].NumUpvalues)
			}
		case OP_TEST, OP_EQ, OP_LT, OP_LE, OP_SETGLOBAL, OP_SETUPVAL, OP_SETTABLE,
			OP_SETTABLEKS, OP_SETLIST, OP_CLOSE, OP_RETURN, OP_NOP:
		default:
			if opProps[op].SetRegA && reg == a {
				set(pc)
			}
		}
	}
	return setreg
}

// constName is 5.1's kname: the constant string an RK operand names, or
// "?".
func constName(p *FunctionProto, rk int) string {
	if opIsK(rk) {
		if k := opIndexK(rk); k < len(p.Constants) {
			if s, ok := p.Constants[k].(LString); ok {
				return string(s)
			}
		}
	}
	return "?"
}

// objName says what register reg holds at instruction lastpc of p:
// what is "local", "global", "field", "upvalue" or "method" and name its
// name, or what is "" when nothing is known.
func objName(p *FunctionProto, lastpc, reg int) (what, name string) {
	for depth := 0; depth < 100; depth++ {
		// a generic for's hidden locals ("(for generator)"...) are not
		// names 5.1 gives: its explist is evaluated before they are
		// active, and a non-function iterator is "a number value"
		if name, ok := localName(p, reg, lastpc); ok && !strings.HasPrefix(name, "(") {
			return "local", name
		}
		pc := findSetReg(p, lastpc, reg)
		if pc < 0 {
			return "", ""
		}
		inst := p.Code[pc]
		switch opGetOpCode(inst) {
		case OP_MOVE, OP_MOVEN:
			if b := opGetArgB(inst); b < opGetArgA(inst) {
				lastpc, reg = pc, b
				continue
			}
		case OP_GETGLOBAL:
			if s, ok := p.Constants[opGetArgBx(inst)].(LString); ok {
				return "global", string(s)
			}
		case OP_GETTABLE, OP_GETTABLEKS:
			return "field", constName(p, opGetArgC(inst))
		case OP_GETUPVAL:
			if b := opGetArgB(inst); b < len(p.DbgUpvalues) {
				return "upvalue", p.DbgUpvalues[b]
			}
			return "upvalue", "?"
		case OP_SELF:
			if reg == opGetArgA(inst) {
				return "method", constName(p, opGetArgC(inst))
			}
		}
		return "", ""
	}
	return "", ""
}

// currentInst is the instruction the current frame runs, when it is a
// Lua function's.
func (ls *LState) currentInst() (cf *callFrame, inst uint32, ok bool) {
	cf = ls.currentFrame
	if cf == nil || cf.Fn == nil || cf.Fn.IsG || cf.Pc < 1 || cf.Pc > len(cf.Fn.Proto.Code) {
		return nil, 0, false
	}
	return cf, cf.Fn.Proto.Code[cf.Pc-1], true
}

// varInfo is 5.1's varinfo: " global 'foo'" for register reg of the
// current Lua frame when it holds v and its name is known, "" otherwise
// (reg < 0: v is not in a register).
func (ls *LState) varInfo(v LValue, reg int) string {
	cf, _, ok := ls.currentInst()
	if !ok || reg < 0 {
		return ""
	}
	if ls.reg.Get(cf.LocalBase+reg) != v {
		return ""
	}
	what, name := objName(cf.Fn.Proto, cf.Pc-1, reg)
	if what == "" {
		return ""
	}
	return " " + what + " '" + name + "'"
}

// typeError raises 5.1's luaG_typeerror: "attempt to <op> <varinfo>
// (a <type> value)", or "attempt to <op> a <type> value" when the value
// is not named.
// runError raises an error of an operation (a call, an index, a
// comparison...) as Lua 5.1's luaG_runerror: with the position of the
// running function when it is a Lua one, and none when a Go function
// (table.sort comparing, print calling tostring) does the operation.
func (ls *LState) runError(format string, args ...interface{}) {
	if cf := ls.currentFrame; cf != nil && cf.Fn.IsG {
		ls.raiseError(0, format, args...)
	}
	ls.raiseError(1, format, args...)
}

func (ls *LState) typeError(op string, v LValue, reg int) {
	t := v.Type().String()
	if vi := ls.varInfo(v, reg); vi != "" {
		ls.runError("attempt to %s%s (a %s value)", op, vi, t)
	}
	ls.runError("attempt to %s a %s value", op, t)
}

// instReg is the register of the current instruction that holds the
// value an operation fails on: role "call" (the function), "index" (the
// table), "len", "arith1"/"arith2" (an arithmetic's operands); -1 when
// the instruction is not such or the operand is a constant.
func (ls *LState) instReg(role string) int {
	_, inst, ok := ls.currentInst()
	if !ok {
		return -1
	}
	op := opGetOpCode(inst)
	switch role {
	case "call":
		if op == OP_CALL || op == OP_TAILCALL {
			return opGetArgA(inst)
		}
	case "index":
		switch op {
		case OP_GETTABLE, OP_GETTABLEKS, OP_SELF:
			return opGetArgB(inst)
		case OP_SETTABLE, OP_SETTABLEKS:
			return opGetArgA(inst)
		}
	case "len":
		if op == OP_LEN {
			return opGetArgB(inst)
		}
	case "arith1", "arith2":
		switch op {
		case OP_UNM:
			return opGetArgB(inst)
		case OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW:
			rk := opGetArgB(inst)
			if role == "arith2" {
				rk = opGetArgC(inst)
			}
			if !opIsK(rk) {
				return rk
			}
		}
	}
	return -1
}

// callError raises "attempt to call ... (a nil value)" for v, which the
// current instruction was to call.
func (ls *LState) callError(v LValue) {
	ls.typeError("call", v, ls.instReg("call"))
}

// indexError raises "attempt to index ..." for v; first: v is the value
// the instruction indexes, not one reached through __index.
func (ls *LState) indexError(v LValue, first bool) {
	reg := -1
	if first {
		reg = ls.instReg("index")
	}
	ls.typeError("index", v, reg)
}

// arithError is 5.1's luaG_aritherror: it names the first operand that
// is not a number (nor a string that reads as one).
func (ls *LState) arithError(lhs, rhs LValue) {
	if !isArithOperand(lhs) {
		ls.typeError("perform arithmetic on", lhs, ls.instReg("arith1"))
	}
	ls.typeError("perform arithmetic on", rhs, ls.instReg("arith2"))
}

func isArithOperand(v LValue) bool {
	switch x := v.(type) {
	case LNumber:
		return true
	case LString:
		_, err := parseNumber(string(x))
		return err == nil
	}
	return false
}

// concatError is 5.1's luaG_concaterror for the values at stack indexes
// li and ri (absolute): the left one unless it is a string or a number.
func (ls *LState) concatError(li, ri int, lhs, rhs LValue) {
	v, idx := lhs, li
	if LVCanConvToString(lhs) {
		v, idx = rhs, ri
	}
	reg := -1
	if cf, _, ok := ls.currentInst(); ok && idx >= cf.LocalBase {
		reg = idx - cf.LocalBase
	}
	ls.typeError("concatenate", v, reg)
}

// compareError is 5.1's luaG_ordererror.
func (ls *LState) compareError(lhs, rhs LValue) {
	t1, t2 := lhs.Type().String(), rhs.Type().String()
	if t1 == t2 {
		ls.runError("attempt to compare two %s values", t1)
	}
	ls.runError("attempt to compare %s with %s", t1, t2)
}

// calledAs is how the caller of frame fr named the function it called,
// as 5.1's getfuncname: the name and what ("global", "method", ...) of
// the register its CALL called; "?" and "" when the caller is not a Lua
// function or the call was a tail call.
func (ls *LState) calledAs(fr *callFrame) (name, what string) {
	if fr == nil || fr.TailCall > 0 {
		return "?", ""
	}
	caller := fr.Parent
	if caller == nil || caller.Fn == nil || caller.Fn.IsG || caller.Pc < 1 || caller.Pc > len(caller.Fn.Proto.Code) {
		return "?", ""
	}
	inst := caller.Fn.Proto.Code[caller.Pc-1]
	switch opGetOpCode(inst) {
	case OP_CALL, OP_TAILCALL, OP_TFORLOOP:
		if what, name := objName(caller.Fn.Proto, caller.Pc-1, opGetArgA(inst)); what != "" {
			return name, what
		}
	}
	return "?", ""
}
