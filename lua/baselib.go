package lua

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/metrics"
	"strings"

	"github.com/luarun/luarun/lua/parse"
)

/* basic functions {{{ */

func OpenBase(L *LState) int {
	global := L.Get(GlobalsIndex).(*LTable)
	L.SetGlobal("_G", global)
	L.SetGlobal("_VERSION", LString(LuaVersion))
	L.SetGlobal("_GOPHER_LUA_VERSION", LString(PackageName+" "+PackageVersion))
	basemod := L.RegisterModule("_G", baseFuncs)
	global.RawSetString("ipairs", L.NewClosure(baseIpairs, L.NewFunction(ipairsaux)))
	global.RawSetString("pairs", L.NewClosure(basePairs, L.NewFunction(pairsaux)))
	L.Push(basemod)
	return 1
}

var baseFuncs = map[string]LGFunction{
	"assert":         baseAssert,
	"collectgarbage": baseCollectGarbage,
	"dofile":         baseDoFile,
	"error":          baseError,
	"getfenv":        baseGetFEnv,
	"getmetatable":   baseGetMetatable,
	"load":           baseLoad,
	"loadfile":       baseLoadFile,
	"loadstring":     baseLoadString,
	"next":           baseNext,
	"pcall":          basePCall,
	"print":          basePrint,
	"rawequal":       baseRawEqual,
	"rawget":         baseRawGet,
	"rawset":         baseRawSet,
	"select":         baseSelect,
	"_printregs":     base_PrintRegs,
	"setfenv":        baseSetFEnv,
	"setmetatable":   baseSetMetatable,
	"tonumber":       baseToNumber,
	"tostring":       baseToString,
	"type":           baseType,
	"unpack":         baseUnpack,
	"xpcall":         baseXPCall,
	// loadlib
	"module":  loModule,
	"require": loRequire,
	// hidden features
	"newproxy": baseNewProxy,
}

func baseAssert(L *LState) int {
	if !L.ToBool(1) {
		L.RaiseError("%s", L.OptString(2, "assertion failed!"))
		return 0
	}
	return L.GetTop()
}

// GCStateKey is the registry field holding a state's collectgarbage
// values: setpause and setstepmul, and "work", what collectgarbage("step")
// has done of the current cycle.
const GCStateKey = "luarun.gc-tuning"

// baseCollectGarbage is Lua 5.1's collectgarbage (luarun: gopher-lua's
// ran a Go collection whatever it was asked and returned nothing). The Go
// heap is shared by every state of the program: "count" is the state's
// own memory in KB (a float) as its owner counts it (MemoryInUse; the Go
// heap's size for a state with no owner), and "collect" and a "step" that
// ends a cycle collect the Go heap, clearing the state's weak tables of
// what was collected (weak.go), and have the owner re-base its count. The
// tuning options are remembered and change nothing but the step's size.
// A step does what 5.1's lua_gc(L, LUA_GCSTEP, n) does: 1 + n increments
// of stepmul * 10 bytes of work (all of a cycle when stepmul is 0), and
// answers true when that ends a cycle, which costs the heap's size.
func baseCollectGarbage(L *LState) int {
	opt := L.OptString(1, "collect")
	switch opt {
	case "collect":
		collectFull(L)       // luarun: finalizers, weak tables (gc.go, weak.go)
		MemoryInUse(L, true) // luarun: the owner re-bases its count (memory.go)
		gcState(L).RawSetString("work", LNumber(0))
		L.Push(LNumber(0))
	case "count":
		L.Push(LNumber(float64(MemoryInUse(L, false)) / 1024))
	case "step":
		st := gcState(L)
		stepmul, _ := st.RawGetString("setstepmul").(LNumber)
		work, _ := st.RawGetString("work").(LNumber)
		work += LNumber(1+intMax(L.OptInt(2, 0), 0)) * stepmul * 10
		if stepmul <= 0 || float64(work) >= float64(MemoryInUse(L, false)) {
			collectFull(L) // luarun: finalizers, weak tables (gc.go, weak.go)
			MemoryInUse(L, true)
			st.RawSetString("work", LNumber(0))
			L.Push(LTrue)
		} else {
			st.RawSetString("work", work)
			L.Push(LFalse)
		}
	case "stop", "restart":
		L.Push(LNumber(0))
	case "setpause", "setstepmul":
		st := gcState(L)
		old := st.RawGetString(opt)
		st.RawSetString(opt, LNumber(L.OptInt(2, 0)))
		L.Push(old)
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// HeapBytes is the size of the Go heap's objects, garbage not yet swept
// included (as Lua's count includes garbage not yet collected).
func HeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcState is L's table of collectgarbage values (GCStateKey).
func gcState(L *LState) *LTable {
	if t, ok := L.G.Registry().RawGetString(GCStateKey).(*LTable); ok {
		return t
	}
	t := L.CreateTable(0, 3)
	t.RawSetString("setpause", LNumber(200)) // 5.1's defaults
	t.RawSetString("setstepmul", LNumber(200))
	t.RawSetString("work", LNumber(0))
	L.G.Registry().RawSetString(GCStateKey, t)
	return t
}

func baseDoFile(L *LState) int {
	src := L.ToString(1)
	top := L.GetTop()
	fn, err := L.LoadFile(src)
	if err != nil {
		L.Push(LString(loadErrorMessage(err, "@"+src)))
		L.Panic(L)
	}
	L.Push(fn)
	L.Call(0, MultRet)
	return L.GetTop() - top
}

func baseError(L *LState) int {
	obj := L.CheckAny(1)
	level := L.OptCInt(2, 1)
	L.Error(obj, level)
	return 0
}

func baseGetFEnv(L *LState) int {
	var value LValue
	if L.GetTop() == 0 {
		value = LNumber(1)
	} else {
		value = L.Get(1)
	}

	if fn, ok := value.(*LFunction); ok {
		if !fn.IsG {
			L.Push(fn.Env)
		} else {
			L.Push(L.G.Global)
		}
		return 1
	}

	if number, ok := value.(LNumber); ok {
		level := int(float64(number))
		if level <= 0 {
			L.Push(L.Env)
		} else {
			cf := L.currentFrame
			for i := 0; i < level && cf != nil; i++ {
				cf = cf.Parent
			}
			if cf == nil || cf.Fn.IsG {
				L.Push(L.G.Global)
			} else {
				L.Push(cf.Fn.Env)
			}
		}
		return 1
	}

	L.Push(L.G.Global)
	return 1
}

func baseGetMetatable(L *LState) int {
	L.Push(L.GetMetatable(L.CheckAny(1)))
	return 1
}

func ipairsaux(L *LState) int {
	tb := L.CheckTable(1)
	i := L.CheckInt(2)
	i++
	v := tb.RawGetInt(i)
	if v == LNil {
		return 0
	} else {
		L.Pop(1)
		L.Push(LNumber(i))
		L.Push(LNumber(i))
		L.Push(v)
		return 2
	}
}

func baseIpairs(L *LState) int {
	tb := L.CheckTable(1)
	L.Push(L.Get(UpvalueIndex(1)))
	L.Push(tb)
	L.Push(LNumber(0))
	return 3
}

// loadaux loads a chunk named chunkname; source is its name as Lua 5.1
// has it ("=name", "@file" or the text itself), for a syntax error's
// message.
// loadaux loads the chunk named chunkname (Lua 5.1's source string), its
// load errors named as source is. A name other than "=name" and "@file" is
// a name load or loadstring was given, or loadstring's text: positions
// show it as [string "name"] (markTextName).
func loadaux(L *LState, reader io.Reader, chunkname, source string) int {
	fn, err := L.Load(reader, chunkname)
	if err != nil {
		L.Push(LNil)
		L.Push(LString(loadErrorMessage(err, source)))
		return 2
	}
	if !strings.HasPrefix(chunkname, "=") && !strings.HasPrefix(chunkname, "@") {
		fn.Proto.markTextName()
	}
	L.Push(fn)
	return 1
}

func baseLoad(L *LState) int {
	fn := L.CheckFunction(1)
	chunkname := L.OptString(2, "=(load)")
	top := L.GetTop()
	buf := []string{}
	for {
		L.SetTop(top)
		L.Push(fn)
		L.Call(0, 1)
		ret := L.reg.Pop()
		if ret == LNil {
			break
		} else if LVCanConvToString(ret) {
			str := ret.String()
			if len(str) > 0 {
				buf = append(buf, string(str))
			} else {
				break
			}
		} else {
			L.Push(LNil)
			L.Push(LString("reader function must return a string"))
			return 2
		}
	}
	return loadaux(L, strings.NewReader(strings.Join(buf, "")), chunkname, chunkname)
}

func baseLoadFile(L *LState) int {
	var reader io.Reader
	var chunkname string
	var err error
	if L.GetTop() < 1 {
		reader = os.Stdin
		chunkname = "<stdin>"
	} else {
		chunkname = L.CheckString(1)
		reader, err = os.Open(chunkname)
		if err != nil {
			L.Push(LNil)
			L.Push(LString((&fileLoadError{"open", chunkname, err}).Error()))
			return 2
		}
		defer reader.(*os.File).Close()
	}
	reader, err = skipHashLine(reader) // luarun: as Lua 5.1's loadfile
	if err != nil {
		L.Push(LNil)
		L.Push(LString((&fileLoadError{"read", chunkname, err}).Error()))
		return 2
	}
	source := "=stdin"
	if chunkname != "<stdin>" {
		source = "@" + chunkname
	}
	return loadaux(L, reader, source, source) // named as in 5.1: positions show chunkname
}

// baseLoadString is loadstring(s [, chunkname]); as in Lua 5.1 the chunk
// is named by s itself when no name is given, shown as [string "s"]
// (luarun: it was "<string>").
func baseLoadString(L *LState) int {
	s := L.CheckString(1)
	if L.Get(2) == LNil {
		return loadaux(L, strings.NewReader(s), s, s)
	}
	name := L.CheckString(2)
	return loadaux(L, strings.NewReader(s), name, name)
}

// loadErrorMessage is the message of err, a failure to load the chunk
// named source (Lua 5.1's name: "=name", "@file" or the text): a syntax
// error is written as 5.1 writes it, "chunk:line: message near 'token'"
// (luarun: gopher-lua's was "name line:1(column:3) near 'x':   syntax
// error").
func loadErrorMessage(err error, source string) string {
	cause := err
	if ae, ok := err.(*ApiError); ok && ae.Cause != nil {
		cause = ae.Cause
	}
	var ue *UndumpError
	if errors.As(cause, &ue) { // a binary chunk, named as 5.1's lundump does
		return (&UndumpError{Name: undumpName(source), Msg: ue.Msg}).Error()
	}
	var pe *parse.Error
	if errors.As(cause, &pe) {
		return fmt.Sprintf("%s:%d: %s", chunkID(source, maxSrc), pe.Line, pe.Reason())
	}
	var ce *CompileError
	if errors.As(cause, &ce) { // as 5.1's lexerror without a token
		return fmt.Sprintf("%s:%d: %s", chunkID(source, maxSrc), ce.Line, ce.Message)
	}
	return err.Error()
}

// PositionSource is how a "chunk:line:" position and a traceback name
// the chunk named name: as 5.1's luaO_chunkid for "=name" and "@file",
// any other name (a file's path, "<string>") as it is. A chunk load or
// loadstring named is shown by ProtoPositionSource.
func PositionSource(name string) string {
	if strings.HasPrefix(name, "=") || strings.HasPrefix(name, "@") {
		return chunkID(name, idSize)
	}
	return name
}

// ShortSource is debug.getinfo's short_src for a chunk named source, as
// Lua 5.1 writes it (luaO_chunkid): "=name" and "@file" as name and
// file, a chunk named by its text (loadstring without a name, already
// "[string "..."]") as it is, any other name as [string "name"].
func ShortSource(source string) string {
	switch {
	case strings.HasPrefix(source, "=") || strings.HasPrefix(source, "@"):
		return chunkID(source, idSize)
	case strings.HasPrefix(source, `[string "`):
		return source
	}
	return chunkID(source, idSize)
}

// The sizes 5.1 gives luaO_chunkid: LUA_IDSIZE for a position in a
// runtime error, MAXSRC for a syntax error.
const (
	idSize = 60
	maxSrc = 80
)

// chunkID is Lua 5.1's luaO_chunkid(out, source, idSize): how a chunk
// named source is shown in messages ("=name" as name, "@file" as file,
// its last part after "..." when longer, and text as [string "its first
// line"], cut and "...").
func chunkID(source string, idSize int) string {
	switch {
	case strings.HasPrefix(source, "="):
		if len(source) > idSize {
			return source[1:idSize]
		}
		return source[1:]
	case strings.HasPrefix(source, "@"):
		name := source[1:]
		if max := idSize - len(" '...' ") - 1; len(name) > max {
			return "..." + name[len(name)-max:]
		}
		return name
	}
	max := idSize - len(" [string \"...\"] ") - 1
	line := source
	if i := strings.IndexAny(source, "\n\r"); i >= 0 {
		line = source[:i]
	}
	if len(line) > max {
		line = line[:max]
	}
	if len(line) < len(source) {
		return `[string "` + line + `..."]`
	}
	return `[string "` + line + `"]`
}

func baseNext(L *LState) int {
	tb := L.CheckTable(1)
	index := LNil
	if L.GetTop() >= 2 {
		index = L.Get(2)
	}
	key, value := tb.Next(index)
	if key == LNil {
		L.Push(LNil)
		return 1
	}
	L.Push(key)
	L.Push(value)
	return 2
}

func pairsaux(L *LState) int {
	tb := L.CheckTable(1)
	key, value := tb.Next(L.Get(2))
	if key == LNil {
		return 0
	} else {
		L.Pop(1)
		L.Push(key)
		L.Push(key)
		L.Push(value)
		return 2
	}
}

func basePairs(L *LState) int {
	tb := L.CheckTable(1)
	L.Push(L.Get(UpvalueIndex(1)))
	L.Push(tb)
	L.Push(LNil)
	return 3
}

func basePCall(L *LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != LTFunction && L.GetMetaField(v, "__call").Type() != LTFunction {
		L.Push(LFalse)
		L.Push(LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	nargs := L.GetTop() - 1
	if err := L.PCall(nargs, MultRet, nil); err != nil {
		L.Push(LFalse)
		if aerr, ok := err.(*ApiError); ok {
			L.Push(aerr.Object)
		} else {
			L.Push(LString(err.Error()))
		}
		return 2
	} else {
		L.Insert(LTrue, 1)
		return L.GetTop()
	}
}

func basePrint(L *LState) int {
	fmt.Print(PrintLine(L))
	return 0
}

// PrintLine is the line Lua 5.1's print writes for the arguments on L's
// stack: each one passed to the global tostring, so that a script may
// replace it (luarun: gopher-lua's print called the __tostring metamethod
// itself), tab-separated, with a newline. A tostring result that is not a
// string or a number raises 5.1's error.
func PrintLine(L *LState) string {
	top := L.GetTop()
	tostring := L.GetGlobal("tostring")
	builtin := isBaseToString(tostring)
	var b strings.Builder
	for i := 1; i <= top; i++ {
		var s LValue
		if builtin {
			s = L.ToStringMeta(L.Get(i))
		} else {
			L.Push(tostring)
			L.Push(L.Get(i))
			L.Call(1, 1)
			s = L.Get(-1)
			L.Pop(1)
		}
		if i > 1 {
			b.WriteByte('\t')
		}
		switch v := s.(type) {
		case LString:
			b.WriteString(string(v))
		case LNumber:
			b.WriteString(v.String())
		default:
			L.RaiseError("'tostring' must return a string to 'print'")
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// baseToStringPC is baseToString's code address: print calls the
// function itself, not through the VM, when the global tostring is it.
var baseToStringPC = reflect.ValueOf(LGFunction(baseToString)).Pointer()

func isBaseToString(v LValue) bool {
	f, ok := v.(*LFunction)
	return ok && f.IsG && f.GFunction != nil && reflect.ValueOf(f.GFunction).Pointer() == baseToStringPC
}

func base_PrintRegs(L *LState) int {
	L.printReg()
	return 0
}

func baseRawEqual(L *LState) int {
	if L.CheckAny(1) == L.CheckAny(2) {
		L.Push(LTrue)
	} else {
		L.Push(LFalse)
	}
	return 1
}

func baseRawGet(L *LState) int {
	L.Push(L.RawGet(L.CheckTable(1), L.CheckAny(2)))
	return 1
}

func baseRawSet(L *LState) int {
	L.RawSet(L.CheckTable(1), L.CheckAny(2), L.CheckAny(3))
	return 0
}

// baseSelect is 5.1's luaB_select: a string starting with '#' counts,
// anything else is an integer (a numeric string too).
func baseSelect(L *LState) int {
	n := L.GetTop()
	if s, ok := L.Get(1).(LString); ok && len(s) > 0 && s[0] == '#' {
		L.Push(LNumber(n - 1))
		return 1
	}
	i := L.CheckCInt(1)
	if i < 0 {
		i = n + i
	} else if i > n {
		i = n
	}
	if i < 1 {
		L.ArgError(1, "index out of range")
	}
	return n - i
}

func baseSetFEnv(L *LState) int {
	var value LValue
	if L.GetTop() == 0 {
		value = LNumber(1)
	} else {
		value = L.Get(1)
	}
	env := L.CheckTable(2)

	if fn, ok := value.(*LFunction); ok {
		if fn.IsG {
			L.RaiseError("cannot change the environment of given object")
		} else {
			fn.Env = env
			L.Push(fn)
			return 1
		}
	}

	if number, ok := value.(LNumber); ok {
		level := int(float64(number))
		if level <= 0 {
			L.Env = env
			return 0
		}

		cf := L.currentFrame
		for i := 0; i < level && cf != nil; i++ {
			cf = cf.Parent
		}
		if cf == nil || cf.Fn.IsG {
			L.RaiseError("cannot change the environment of given object")
		} else {
			cf.Fn.Env = env
			L.Push(cf.Fn)
			return 1
		}
	}

	L.RaiseError("cannot change the environment of given object")
	return 0
}

func baseSetMetatable(L *LState) int {
	L.CheckTypes(2, LTNil, LTTable)
	obj := L.Get(1)
	if obj == LNil {
		L.RaiseError("cannot set metatable to a nil object.")
	}
	mt := L.Get(2)
	if m := L.metatable(obj, true); m != LNil {
		if tb, ok := m.(*LTable); ok && tb.RawGetString("__metatable") != LNil {
			L.RaiseError("cannot change a protected metatable")
		}
	}
	L.SetMetatable(obj, mt)
	L.SetTop(1)
	return 1
}

func baseToNumber(L *LState) int {
	// luarun: Lua 5.1's rules (parseNumber, and parseUintBase with a base
	// other than 10).
	base := L.OptCInt(2, 10)
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	switch lv := L.CheckAny(1).(type) {
	case LNumber:
		if base == 10 {
			L.Push(lv)
			return 1
		}
		if v, ok := parseUintBase(lv.String(), base); ok {
			L.Push(v)
			return 1
		}
	case LString:
		if base == 10 {
			if v, err := parseNumber(string(lv)); err == nil {
				L.Push(v)
				return 1
			}
		} else if v, ok := parseUintBase(string(lv), base); ok {
			L.Push(v)
			return 1
		}
	}
	L.Push(LNil)
	return 1
}

func baseToString(L *LState) int {
	v1 := L.CheckAny(1)
	L.Push(L.ToStringMeta(v1))
	return 1
}

func baseType(L *LState) int {
	L.Push(LString(L.CheckAny(1).Type().String()))
	return 1
}

// baseUnpack is 5.1's luaB_unpack: C ints (cInt) for the range, and
// "too many results" when the stack cannot take them all.
func baseUnpack(L *LState) int {
	tb := L.CheckTable(1)
	i := L.OptCInt(2, 1)
	e := tb.Len()
	if L.Get(3) != LNil {
		e = L.CheckCInt(3)
	}
	if i > e {
		return 0
	}
	n := e - i + 1 // at most 2^32: no overflow in a Go int
	if n > L.stackRoom() {
		L.RaiseError("too many results to unpack")
	}
	for ; i <= e; i++ {
		L.Push(tb.RawGetInt(i))
	}
	return n
}

func baseXPCall(L *LState) int {
	fn := L.CheckFunction(1)
	errfunc := L.CheckFunction(2)

	top := L.GetTop()
	L.Push(fn)
	if err := L.PCall(0, MultRet, errfunc); err != nil {
		L.Push(LFalse)
		if aerr, ok := err.(*ApiError); ok {
			L.Push(aerr.Object)
		} else {
			L.Push(LString(err.Error()))
		}
		return 2
	} else {
		L.Insert(LTrue, top+1)
		return L.GetTop() - top
	}
}

/* }}} */

/* load lib {{{ */

func loModule(L *LState) int {
	name := L.CheckString(1)
	loaded := L.GetField(L.Get(RegistryIndex), "_LOADED")
	tb := L.GetField(loaded, name)
	if _, ok := tb.(*LTable); !ok {
		tb = L.FindTable(L.Get(GlobalsIndex).(*LTable), name, 1)
		if tb == LNil {
			L.RaiseError("name conflict for module: %v", name)
		}
		L.SetField(loaded, name, tb)
	}
	if L.GetField(tb, "_NAME") == LNil {
		L.SetField(tb, "_M", tb)
		L.SetField(tb, "_NAME", LString(name))
		names := strings.Split(name, ".")
		pname := ""
		if len(names) > 1 {
			pname = strings.Join(names[:len(names)-1], ".") + "."
		}
		L.SetField(tb, "_PACKAGE", LString(pname))
	}

	caller := L.currentFrame.Parent
	if caller == nil {
		L.RaiseError("no calling stack.")
	} else if caller.Fn.IsG {
		L.RaiseError("module() can not be called from GFunctions.")
	}
	L.SetFEnv(caller.Fn, tb)

	top := L.GetTop()
	for i := 2; i <= top; i++ {
		L.Push(L.Get(i))
		L.Push(tb)
		L.Call(1, 0)
	}
	L.Push(tb)
	return 1
}

var loopdetection = &LUserData{}

func loRequire(L *LState) int {
	name := L.CheckString(1)
	loaded := L.GetField(L.Get(RegistryIndex), "_LOADED")
	lv := L.GetField(loaded, name)
	if LVAsBool(lv) {
		if lv == loopdetection {
			L.RaiseError("loop or previous error loading module: %s", name)
		}
		L.Push(lv)
		return 1
	}
	loaders, ok := L.GetField(L.Get(RegistryIndex), "_LOADERS").(*LTable)
	if !ok {
		L.RaiseError("package.loaders must be a table")
	}
	messages := []string{}
	var modasfunc LValue
	for i := 1; ; i++ {
		loader := L.RawGetInt(loaders, i)
		if loader == LNil {
			L.RaiseError("module %s not found:\n\t%s, ", name, strings.Join(messages, "\n\t"))
		}
		L.Push(loader)
		L.Push(LString(name))
		L.Call(1, 1)
		ret := L.reg.Pop()
		switch retv := ret.(type) {
		case *LFunction:
			modasfunc = retv
			goto loopbreak
		case LString:
			messages = append(messages, string(retv))
		}
	}
loopbreak:
	L.SetField(loaded, name, loopdetection)
	L.Push(modasfunc)
	L.Push(LString(name))
	L.Call(1, 1)
	ret := L.reg.Pop()
	modv := L.GetField(loaded, name)
	if ret != LNil && modv == loopdetection {
		L.SetField(loaded, name, ret)
		L.Push(ret)
	} else if modv == loopdetection {
		L.SetField(loaded, name, LTrue)
		L.Push(LTrue)
	} else {
		L.Push(modv)
	}
	return 1
}

/* }}} */

/* hidden features {{{ */

func baseNewProxy(L *LState) int {
	ud := L.NewUserData()
	L.SetTop(1)
	if L.Get(1) == LTrue {
		L.SetMetatable(ud, L.NewTable())
		L.registerGC(ud) // luarun: a __gc may come later (gc.go)
	} else if d, ok := L.Get(1).(*LUserData); ok {
		L.SetMetatable(ud, L.GetMetatable(d))
		L.registerGC(ud)
	}
	L.Push(ud)
	return 1
}

/* }}} */

//
