package luaproc

// Reading gopher-lua's call frames.
//
// gopher-lua keeps two facts luarun needs out of its public API:
//
//  1. Whether a blocking call can yield. A Go function can only yield when
//     every call between it and the coroutine's base was made by the VM's
//     CALL instruction. A metamethod, the iterator of a loop over pairs,
//     ipairs or next (other generic fors are compiled to ordinary calls:
//     lua/FORK.md) or a function
//     called from Go (table.sort's comparator, string.gsub's replacement)
//     runs in a nested VM loop; a yield there returns early into the Go code
//     that called it and corrupts the coroutine.
//  2. How many results the suspended call wants. When a coroutine yields
//     from a Go function and is resumed with fewer values than the CALL
//     instruction asked for, gopher-lua leaves the missing registers unset
//     (a Go nil, which crashes the VM on first use). Every resume is
//     therefore padded with nils up to that count.
//
// Both are read from the interpreter's frame list (lua.CallFrame,
// LState.CurrentFrame: the interpreter is luarun's own package, so
// nothing mirrors its private layout any more). TestFrameLayout checks
// the frames against the public API (GetStack's frame, and GetInfo's
// line for the frame's program counter).

import (
	"strconv"

	lua "github.com/luarun/luarun/lua"
)

// callFrame is a frame of a state's call stack.
type callFrame = lua.CallFrame

// currentFrame returns the frame th is executing (or suspended in), or nil.
func currentFrame(th *lua.LState) *callFrame { return th.CurrentFrame() }

// Instruction decoding (gopher-lua's opcode.go).
func opcode(inst uint32) int { return int(inst >> 26) }
func argC(inst uint32) int   { return int(inst>>9) & 0x1ff }

// pendingInstruction returns the instruction a Lua frame is executing
// (its pc was advanced past it before it ran).
func pendingInstruction(f *callFrame) (uint32, bool) {
	if f == nil || f.Fn == nil || f.Fn.IsG || f.Fn.Proto == nil || f.Pc < 1 || f.Pc > len(f.Fn.Proto.Code) {
		return 0, false
	}
	return f.Fn.Proto.Code[f.Pc-1], true
}

// wantedResults returns how many values the call th is suspended in
// expects back, or -1 for "all of them" (or unknown).
func wantedResults(th *lua.LState) int {
	inst, ok := pendingInstruction(currentFrame(th))
	if !ok || opcode(inst) != lua.OP_CALL {
		return -1
	}
	return argC(inst) - 1 // C == 0: multiple results → -1
}

// callerWants returns how many results the Lua call of the Go function
// running in frame f wants back (-1: all, or unknown).
func callerWants(f *callFrame) int {
	if f == nil {
		return -1
	}
	inst, ok := pendingInstruction(f.Parent)
	if !ok || opcode(inst) != lua.OP_CALL {
		return -1
	}
	return argC(inst) - 1
}

// blockContext says where a blocking call made in thread th, whose Go
// function runs in frame f, cannot yield from: "" if it can, else "a
// metamethod", "a sort comparator", "a for iterator" or "a Go function".
// It walks from f to the base of each coroutine, and from each coroutine
// to the one that resumed it, up to root (the process's own coroutine).
// sortFn is the process's table.sort, to name the commonest Go caller.
func blockContext(th *lua.LState, f *callFrame, root *lua.LState, sortFn *lua.LFunction) string {
	for {
		for ; f != nil && f.Parent != nil; f = f.Parent {
			caller := f.Parent
			if caller.Fn.IsG {
				if caller.Fn == sortFn {
					return "a sort comparator"
				}
				return "a Go function"
			}
			inst, ok := pendingInstruction(caller)
			if !ok {
				return "a Go function"
			}
			switch opcode(inst) {
			case lua.OP_CALL, lua.OP_TAILCALL:
			case lua.OP_TFORLOOP:
				return "a for iterator"
			default:
				return "a metamethod"
			}
		}
		if th == root || th.Parent == nil {
			return ""
		}
		th = th.Parent
		f = currentFrame(th)
	}
}

// canYieldTo says whether every coroutine from th up to root may yield
// now: none runs a nested VM loop for a call from Go (lua's nCcalls,
// LState.CanYield), which blockContext's reading of the frames misses
// for a Lua function that Go code called from a Lua frame.
func canYieldTo(th, root *lua.LState) bool {
	for ; th != nil; th = th.Parent {
		if !th.CanYield() {
			return false
		}
		if th == root {
			return true
		}
	}
	return true
}

// inHook says whether th, or a coroutine that resumed it up to root, is
// running its debug hook: a hook runs in a nested VM loop, which a yield
// would corrupt (lua/hook.go).
func inHook(th, root *lua.LState) bool {
	for ; th != nil; th = th.Parent {
		if th.InHook() {
			return true
		}
		if th == root {
			return false
		}
	}
	return false
}

// frameLine is the line a Lua frame is executing, or 0 if it is not
// known.
func frameLine(f *callFrame) int {
	if lines := f.Fn.Proto.DbgSourcePositions; f.Pc >= 1 && f.Pc <= len(lines) {
		return lines[f.Pc-1]
	}
	return 0
}

// frameWhere is "file:line:" of a Lua frame ("file:" if its line is not
// known).
func frameWhere(f *callFrame) string {
	src := lua.ProtoPositionSource(f.Fn.Proto)
	if line := frameLine(f); line > 0 {
		return src + ":" + strconv.Itoa(line) + ":"
	}
	return src + ":"
}
