package lua

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

type LValueType int

const (
	LTNil LValueType = iota
	LTBool
	LTNumber
	LTString
	LTFunction
	LTUserData
	LTThread
	LTTable
	LTChannel
)

var lValueNames = [9]string{"nil", "boolean", "number", "string", "function", "userdata", "thread", "table", "channel"}

func (vt LValueType) String() string {
	return lValueNames[int(vt)]
}

type LValue interface {
	String() string
	Type() LValueType
}

// LVIsFalse returns true if a given LValue is a nil or false otherwise false.
func LVIsFalse(v LValue) bool { return v == LNil || v == LFalse }

// LVIsFalse returns false if a given LValue is a nil or false otherwise true.
func LVAsBool(v LValue) bool { return v != LNil && v != LFalse }

// LVAsString returns string representation of a given LValue
// if the LValue is a string or number, otherwise an empty string.
func LVAsString(v LValue) string {
	switch sn := v.(type) {
	case LString, LNumber:
		return sn.String()
	default:
		return ""
	}
}

// LVCanConvToString returns true if a given LValue is a string or number
// otherwise false.
func LVCanConvToString(v LValue) bool {
	switch v.(type) {
	case LString, LNumber:
		return true
	default:
		return false
	}
}

// LVAsNumber tries to convert a given LValue to a number.
func LVAsNumber(v LValue) LNumber {
	switch lv := v.(type) {
	case LNumber:
		return lv
	case LString:
		if num, err := parseNumber(string(lv)); err == nil {
			return num
		}
	}
	return LNumber(0)
}

type LNilType struct{}

func (nl *LNilType) String() string   { return "nil" }
func (nl *LNilType) Type() LValueType { return LTNil }

var LNil = LValue(&LNilType{})

type LBool bool

func (bl LBool) String() string {
	if bool(bl) {
		return "true"
	}
	return "false"
}
func (bl LBool) Type() LValueType { return LTBool }

var LTrue = LBool(true)
var LFalse = LBool(false)

type LString string

func (st LString) String() string   { return string(st) }
func (st LString) Type() LValueType { return LTString }

// fmt.Formatter interface
func (st LString) Format(f fmt.State, c rune) {
	switch c {
	case 'd', 'i', 'e', 'E', 'f', 'F', 'g', 'G', 'x', 'X', 'o', 'c':
		// luarun: a numeric string is formatted as its number, as 5.1's
		// luaL_checknumber reads it (the test was inverted)
		if nm, err := parseNumber(string(st)); err == nil {
			nm.Format(f, c)
		} else {
			defaultFormat(string(st), f, 's')
		}
	default:
		defaultFormat(string(st), f, c)
	}
}

// luarun: a number is written as Lua 5.1 writes it (LUAI_NUMFFORMAT,
// "%.14g", and C's inf, -inf, nan and -nan): by tostring, print, io.write,
// concatenation and string.format's %s.
func (nm LNumber) String() string {
	x := float64(nm)
	if x == float64(int32(x)) && (x != 0 || !math.Signbit(x)) {
		return strconv.Itoa(int(x)) // the common case, without -0
	}
	return string(AppendNumber(make([]byte, 0, 24), nm))
}

// AppendNumber appends nm as Lua 5.1 writes it (see LNumber.String).
func AppendNumber(buf []byte, nm LNumber) []byte {
	x := float64(nm)
	switch {
	case math.IsNaN(x):
		// glibc writes the sign of a NaN; 0/0 is negative on x86.
		if math.Signbit(x) {
			return append(buf, "-nan"...)
		}
		return append(buf, "nan"...)
	case math.IsInf(x, 1):
		return append(buf, "inf"...)
	case math.IsInf(x, -1):
		return append(buf, "-inf"...)
	case x == float64(int64(x)) && x > -1e14 && x < 1e14 && (x != 0 || !math.Signbit(x)):
		return strconv.AppendInt(buf, int64(x), 10)
	}
	// strconv's %g with a precision chooses %e and %f and drops trailing
	// zeros as C's does, with at least two exponent digits.
	return strconv.AppendFloat(buf, x, 'g', 14, 64)
}

func (nm LNumber) Type() LValueType { return LTNumber }

// fmt.Formatter interface
func (nm LNumber) Format(f fmt.State, c rune) {
	switch c {
	case 'q', 's':
		defaultFormat(nm.String(), f, c)
	case 'b', 'c', 'd', 'o', 'x', 'X', 'U':
		defaultFormat(int64(nm), f, c)
	case 'e', 'E', 'f', 'F', 'g', 'G':
		// luarun: as C's printf: inf and nan (padded with spaces), and
		// %g's default precision 6 (fmt's %g is the shortest text).
		x := float64(nm)
		if math.IsInf(x, 0) || math.IsNaN(x) {
			s := string(AppendNumber(nil, nm))
			if s[0] != '-' && f.Flag('+') {
				s = "+" + s
			} else if s[0] != '-' && f.Flag(' ') {
				s = " " + s
			}
			if c == 'E' || c == 'F' || c == 'G' {
				s = strings.ToUpper(s)
			}
			if w, ok := f.Width(); ok && w > len(s) {
				if f.Flag('-') {
					s += strings.Repeat(" ", w-len(s))
				} else {
					s = strings.Repeat(" ", w-len(s)) + s
				}
			}
			fmt.Fprint(f, s)
			return
		}
		if _, ok := f.Precision(); !ok && (c == 'g' || c == 'G') {
			spec := "%" + fmtFlags(f)
			if w, ok := f.Width(); ok {
				spec += strconv.Itoa(w)
			}
			fmt.Fprintf(f, spec+".6"+string(c), x)
			return
		}
		defaultFormat(x, f, c)
	case 'i':
		defaultFormat(int64(nm), f, 'd')
	default:
		if isInteger(nm) {
			defaultFormat(int64(nm), f, c)
		} else {
			defaultFormat(float64(nm), f, c)
		}
	}
}

type LTable struct {
	Metatable LValue

	// luarun: Lua 5.1's layout (table.go): the array part holds the keys
	// 1..len(array) (LNil where absent), node the hash part (0 or a power
	// of two nodes). flags holds getFreePos's bound (5.1's lastfree) in
	// its low bits, and the Share and Freeze marks (flagShared,
	// flagFrozen). border is -1 or the count of the array part's first
	// slots in use when all the others are empty (#t without a search).
	array  []LValue
	node   []tnode
	flags  uint32
	border int32
	// luarun: the state the table belongs to, whose memory its growth
	// charges (memory.go: nil for none), and, while flagView is set, the
	// shared table it is a copy-on-write view of (cow.go).
	home *tableHome
}

func (tb *LTable) String() string   { return fmt.Sprintf("table: %p", tb) }
func (tb *LTable) Type() LValueType { return LTTable }

type LFunction struct {
	IsG       bool
	Env       *LTable
	Proto     *FunctionProto
	GFunction LGFunction
	Upvalues  []*Upvalue
}
type LGFunction func(*LState) int

func (fn *LFunction) String() string   { return fmt.Sprintf("function: %p", fn) }
func (fn *LFunction) Type() LValueType { return LTFunction }

type Global struct {
	MainThread    *LState
	CurrentThread *LState
	// registry: the registry table (RegistryIndex), nil until the first
	// Registry call (luarun: most luarun states never write one, and an
	// empty table is 80 bytes a process); RegistryIfMade reads it
	// without making it.
	registry *LTable
	Global   *LTable

	// Views are the state's copy-on-write views of shared tables (luarun,
	// cow.go).
	Views ViewSet

	builtinMts [int(LTChannel) + 1]*LTable // luarun: by type, nil for none (was a map of LValue: ~200 B a state, and a map lookup per method call on a string)
	// memLeft: the bytes the state may still allocate before its owner
	// hears of it (luarun, memory.go); in place of gopher-lua's unused
	// gccount.
	memLeft int64
	// home is what the state's own tables point to (LTable.home): the
	// account their growth charges (luarun, memory.go).
	home tableHome
	// rare is what few states use, made by the first use (luarun: one
	// pointer for three, so that a Global is 256 bytes, not 272, in the
	// 288-byte size class; TestStateSizes)
	rare *globalRare

	// GCRoots, when set, returns the Lua values that the embedder's Go
	// code holds (coroutines it resumes, functions it will call): roots
	// of the walk that finds the userdata to finalize (luarun, gc.go).
	GCRoots func() []LValue
}

// Registry is g's registry table (RegistryIndex), made on first use.
func (g *Global) Registry() *LTable {
	if g.registry == nil {
		g.registry = newLTable(0, 0)
		g.registry.home = &g.home
	}
	return g.registry
}

// RegistryIfMade is g's registry table, or nil if nothing made it yet
// (nothing is in it): for the readers that must not make one.
func (g *Global) RegistryIfMade() *LTable { return g.registry }

// ClearTypeMetatables removes the metatables g's state keeps by type
// (every type's but tables' and userdata's, which are per value), at
// once: for a state handed to another process (luaproc), where a
// SetMetatable of nil for each type cost six type switches.
func (g *Global) ClearTypeMetatables() { g.builtinMts = [len(g.builtinMts)]*LTable{} }

// globalRare is what few states use (Global.rare).
type globalRare struct {
	tempFiles []*os.File // io.tmpfile's, removed by Close
	weak      *weakSet   // the weak tables (weak.go), nil until the first
	gc        *gcSet     // userdata with finalizers (gc.go), nil until the first
}

// more is g.rare, made if it was not.
func (g *Global) more() *globalRare {
	if g.rare == nil {
		g.rare = &globalRare{}
	}
	return g.rare
}

// gcs is g's userdata with finalizers, nil for none.
func (g *Global) gcs() *gcSet {
	if g.rare == nil {
		return nil
	}
	return g.rare.gc
}

// weaks is g's weak tables, nil for none.
func (g *Global) weaks() *weakSet {
	if g.rare == nil {
		return nil
	}
	return g.rare.weak
}

type LState struct {
	G      *Global
	Parent *LState
	Env    *LTable
	Panic  func(*LState)
	Dead   bool
	// Tagged is the embedder's mark, gopher-lua never reads it (luarun:
	// the coroutine runs one of its process's tasks).
	Tagged bool

	// luarun: the small fields together, so that a state (two per luarun
	// process) stays 192 bytes (TestStateSizes)
	wrapped      bool
	hasErrorFunc bool
	stop         int32

	Options Options

	reg          *registry
	stack        callFrameStack
	alloc        *allocator
	currentFrame *callFrame
	uvcache      *Upvalue
	mainLoop     func(*LState, *callFrame)
	ctx          context.Context
	ctxCancelFn  context.CancelFunc
	interrupt    *Interrupt

	// debug hooks (hook.go; luarun's fork): the hook, and its per-thread
	// state, made with the thread's first hook
	hook *Hook
	ht   *hookThread

	// nCcalls counts the VM loops this thread runs nested in calls from
	// Go (callR: a metamethod, a sort comparator, a gsub callback, a
	// pairs iterator, a Go function's Call), as Lua 5.1's nCcalls does:
	// a yield while it is above 0 would return into that Go code, so
	// coroutine.yield raises instead (luarun). Restored by PCall, reset
	// when the thread is resumed.
	nCcalls int32
	// ticks is Tick's budget of steps before the next check, at most
	// tickEvery (interrupt.go); an int16, so that it and markedYield
	// share nCcalls's 8 bytes and a state is 192 bytes, not 200 (the
	// 208-byte size class; two states a luarun process)
	ticks int16
	// markedYield: the state's last yield was YieldMarked's (read and
	// cleared by ResumeSuspendedFor, TakeMarkedYield)
	markedYield bool
	// preempted: the state yielded before an instruction (preempt.go),
	// which it runs when resumed; the resume pushes no values. In the
	// byte left beside markedYield.
	preempted bool
}

func (ls *LState) String() string   { return fmt.Sprintf("thread: %p", ls) }
func (ls *LState) Type() LValueType { return LTThread }

type LUserData struct {
	Value     interface{}
	Env       *LTable
	Metatable LValue
	gc        uint8 // luarun: finalization state (gc.go); fits the 48-byte size class
}

func (ud *LUserData) String() string   { return fmt.Sprintf("userdata: %p", ud) }
func (ud *LUserData) Type() LValueType { return LTUserData }

type LChannel chan LValue

func (ch LChannel) String() string   { return fmt.Sprintf("channel: %p", ch) }
func (ch LChannel) Type() LValueType { return LTChannel }

// fmtFlags is the flags of f, as written in a format.
func fmtFlags(f fmt.State) string {
	var b []byte
	for _, c := range "+- #0" {
		if f.Flag(int(c)) {
			b = append(b, byte(c))
		}
	}
	return string(b)
}
