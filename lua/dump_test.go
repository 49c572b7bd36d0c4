package lua

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/luarun/luarun/lua/parse"
)

// dumpLua51Src exercises string.dump and the loading of binary chunks
// where Lua 5.1's behaviour is observable; the expected output is
// lua5.1's (checkLua51 runs it there too).
const dumpLua51Src = `
local function rt(f) return assert(loadstring(string.dump(f))) end
print(string.dump(function() end):byte(1, 5))
print(rt(function(a, b) return a + b end)(2, 3))
print(type(string.dump(function() end)))
-- upvalues: fresh ones, nil, after the load; each load its own
local u = 10
local function counter() u = (u or 0) + 1; return u end
local c1, c2 = rt(counter), rt(counter)
print(c1(), c1(), c2(), u)
print(rt(function() return u end)())
-- varargs and parameters
print(rt(function(...) return select('#', ...), ... end)(1, nil, 3))
print(rt(function(a, ...) local t = {...}; return a, #t, arg end)(1, 2, 3))
-- nested closures
print(rt(function(n)
  local function mk(k) return function(x) return x * k + n end end
  local acc = 0
  for i = 1, 3 do acc = acc + mk(i)(10) end
  return acc
end)(1))
-- a big constant table (more than 256 constants: RK and LOADK past 8 bits)
local big = "return function() return {"
for i = 1, 600 do big = big .. "k" .. i .. " = " .. (i + 0.5) .. ", " end
big = big .. "} end"
local t = rt(assert(loadstring(big))())()
local n, sum = 0, 0
for k, v in pairs(t) do n = n + 1; sum = sum + v end
print(n, sum, t.k1, t.k600)
local list = rt(function() return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
  21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45,
  46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60} end)()
print(#list, list[1], list[60])
-- numbers
local inf, ninf, nan, p53, p53b, tiny = rt(function()
  return 1/0, -1/0, 0/0, 2^53, 9007199254740993, 5e-324
end)()
print(inf, ninf, nan ~= nan, p53, string.format("%.17g", p53b), tiny > 0, tiny / 2)
print(1/rt(function() return -0 end)(), 1/rt(function() return 0 end)())
print(rt(function(x) return x == 1e300 * 1e10, -x end)(1/0))
-- strings with zero bytes, booleans, nil
local s, z, b1, b2, nl = rt(function() return "a\0b\0\255", "\0", true, false, nil end)()
print(#s, s:byte(1, -1))
print(#z, z:byte(), b1, b2, nl)
-- the caller's environment, not the dumped function's
local function getx() return x end
setfenv(getx, {x = "fenv"})
x = "global"
print(getx(), rt(getx)())
-- errors keep the original chunk's name, lines and variable names
local f1, f2, f3 = assert(loadstring("return function(t)\n  local x = t.a\n  return x.y\nend, function()\n\n  nofunc()\nend, function() error('boom') end", "@orig.lua"))()
print(pcall(rt(f1), {}))
print(pcall(rt(f2)))
print(select(2, pcall(f3)) == select(2, pcall(rt(f3))))
print(select(2, pcall(assert(loadstring(string.dump(f3), "=other")))) == select(2, pcall(f3)))
local i = debug.getinfo(rt(f1), "S")
print(i.source, i.linedefined, i.lastlinedefined, i.what)
-- a dump of a dump
print(rt(rt(function(a) return a * 2 end))(21))
-- load with a reader function, in pieces
local d = string.dump(function(a) return a .. "!" end)
local pos = 0
print(load(function() pos = pos + 1; return d:sub(pos, pos) ~= "" and d:sub(pos, pos) or nil end)("hi"))
-- Go functions cannot be dumped; a function is needed
print(pcall(string.dump, print))
print(pcall(string.dump, string.len))
print((pcall(string.dump, {})))
-- truncated chunks
local d2 = string.dump(function() return 1 end)
for _, cut in ipairs({1, 4, 5, 8}) do print(loadstring(d2:sub(1, cut))) end
print(loadstring(d2:sub(1, 8), "=named"))
print(loadstring(d2:sub(1, 8), "@file.lua"))
print(load(function() return nil end))
`

const dumpLua51Want = `27	76	117	97	81
5
string
1	2	1	10
nil
3	1	nil	3
1	2	nil
63
600	180600	1.5	600.5
60	1	60
inf	-inf	true	9.007199254741e+15	9007199254740992	true	0
-inf	inf
true	-inf
5	97	0	98	0	255
1	0	true	false	nil
fenv	global
false	orig.lua:3: attempt to index local 'x' (a nil value)
false	orig.lua:6: attempt to call global 'nofunc' (a nil value)
true
true
@orig.lua	1	4	Lua
42
hi!
false	unable to dump given function
false	unable to dump given function
false
nil	binary string: unexpected end in precompiled chunk
nil	binary string: unexpected end in precompiled chunk
nil	binary string: unexpected end in precompiled chunk
nil	binary string: unexpected end in precompiled chunk
nil	named: unexpected end in precompiled chunk
nil	file.lua: unexpected end in precompiled chunk
`

func TestDumpLua51(t *testing.T) {
	// the last line: load of an empty reader gives a function; its
	// address differs
	src := dumpLua51Src[:strings.LastIndex(dumpLua51Src, "print(load(")]
	checkLua51(t, src, dumpLua51Want)
}

// compileString compiles src as a chunk named name.
func compileString(t testing.TB, src, name string) *FunctionProto {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatal(err)
	}
	proto, err := Compile(chunk, name)
	if err != nil {
		t.Fatal(err)
	}
	return proto
}

// TestDumpRoundTripFiles dumps and undumps every Lua file of the test
// suites: the proto comes back equal (so the check undump makes accepts
// all the compiler makes), and dumps again to the same bytes.
func TestDumpRoundTripFiles(t *testing.T) {
	var files []string
	for _, pat := range []string{"_glua-tests/*.lua", "_lua5.1-tests/*.lua", "../luaproc/*.lua", "../luaproc/*/*.lua", "/usr/share/lua/5.1/pl/*.lua"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d files", len(files))
	}
	n := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		chunk, err := parse.Parse(bytes.NewReader(src), file)
		if err != nil {
			continue // a file the suite expects not to compile
		}
		proto, err := Compile(chunk, file)
		if err != nil {
			continue
		}
		d := Dump(proto)
		back, err := Undump(d, "@"+file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if !protoEqual(proto, back) {
			t.Errorf("%s: undumped proto differs", file)
		}
		if !bytes.Equal(Dump(back), d) {
			t.Errorf("%s: dump of the undumped proto differs", file)
		}
		n++
	}
	t.Logf("%d files", n)
}

// protoEqual compares two protos' contents (not their slices' capacities;
// NaN constants are equal when their bits are).
func protoEqual(a, b *FunctionProto) bool {
	if a.SourceName != b.SourceName || a.LineDefined != b.LineDefined || a.LastLineDefined != b.LastLineDefined ||
		a.NumUpvalues != b.NumUpvalues || a.NumParameters != b.NumParameters || a.IsVarArg != b.IsVarArg ||
		a.NumUsedRegisters != b.NumUsedRegisters || len(a.Constants) != len(b.Constants) ||
		len(a.FunctionPrototypes) != len(b.FunctionPrototypes) {
		return false
	}
	for i, k := range a.Constants {
		if k.Type() != b.Constants[i].Type() || (k != b.Constants[i] && k.String() != b.Constants[i].String()) {
			return false
		}
	}
	for i, p := range a.FunctionPrototypes {
		if !protoEqual(p, b.FunctionPrototypes[i]) {
			return false
		}
	}
	eq := func(x, y interface{}) bool {
		vx, vy := reflect.ValueOf(x), reflect.ValueOf(y)
		return vx.Len() == vy.Len() && (vx.Len() == 0 || reflect.DeepEqual(x, y))
	}
	return eq(a.Code, b.Code) && eq(a.DbgSourcePositions, b.DbgSourcePositions) && eq(a.DbgLocals, b.DbgLocals) &&
		eq(a.DbgCalls, b.DbgCalls) && eq(a.DbgUpvalues, b.DbgUpvalues) && eq(a.stringConstants, b.stringConstants)
}

// lua51Chunk is what lua5.1's string.dump(function() end) makes on
// x86-64 (the header and an empty function).
const lua51Chunk = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00" + // no source
	"\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x02\x02" +
	"\x01\x00\x00\x00\x1e\x00\x80\x00" + // RETURN
	"\x00\x00\x00\x00\x00\x00\x00\x00" + // constants, protos
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func TestUndumpRefuses(t *testing.T) {
	good := Dump(compileString(t, "local a = ... return function() return a, 'x', 1.5 end", "=c"))
	cases := []struct {
		chunk, want string
	}{
		{lua51Chunk, "c: bad header (PUC Lua bytecode: luarun loads only chunks made by its own string.dump) in precompiled chunk"},
		{"\x1bLuaR" + string(good[5:]), "c: bad header (version 5.2, not 5.1) in precompiled chunk"},
		{"\x1bLuaQLR\x02" + string(good[8:]), "c: bad header (luarun chunk format 2, this luarun reads 1) in precompiled chunk"},
		{"\x1bLuaQXY\x01" + string(good[8:]), "c: bad header (not a luarun chunk) in precompiled chunk"},
		{"\x1bLux" + string(good[4:]), "c: bad header in precompiled chunk"},
		{string(good[:len(good)-1]), "c: unexpected end in precompiled chunk"},
		{string(good[:8]), "c: unexpected end in precompiled chunk"},
		{string(good[:3]), "c: unexpected end in precompiled chunk"},
	}
	for _, c := range cases {
		_, err := Undump([]byte(c.chunk), "=c")
		var ue *UndumpError
		if !errors.As(err, &ue) || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.chunk, err, c.want)
		}
	}
	// every truncation errors
	for i := 0; i < len(good); i++ {
		if _, err := Undump(good[:i], "=c"); err == nil {
			t.Errorf("a chunk cut at %d of %d bytes loads", i, len(good))
		}
	}
	// a real lua5.1 chunk, where lua5.1 is installed
	if path, err := exec.LookPath("lua5.1"); err == nil {
		out, err := exec.Command(path, "-e", "io.write(string.dump(function(a) return a + 1 end))").Output()
		if err != nil {
			t.Fatal(err)
		}
		L := NewState()
		defer L.Close()
		L.SetGlobal("chunk", LString(out))
		errorIfScriptFail(t, L, `
			local f, err = loadstring(chunk)
			assert(f == nil and err == "binary string: bad header (PUC Lua bytecode: luarun loads only chunks made by its own string.dump) in precompiled chunk", err)`)
	}
}

// TestUndumpChecksCode: chunks whose code names what the function does
// not have are refused (a corrupt chunk), not run.
func TestUndumpChecksCode(t *testing.T) {
	base := compileString(t, "local a, b = ... local t = {x = 1} return function() return a + t.x end", "=c")
	mutate := func(f func(p *FunctionProto)) []byte {
		p, err := Undump(Dump(base), "=c")
		if err != nil {
			t.Fatal(err)
		}
		f(p)
		return Dump(p)
	}
	cases := map[string][]byte{
		"no code":      mutate(func(p *FunctionProto) { p.Code = nil; p.DbgSourcePositions = nil }),
		"lines":        mutate(func(p *FunctionProto) { p.DbgSourcePositions = p.DbgSourcePositions[1:] }),
		"final return": mutate(func(p *FunctionProto) { p.Code[len(p.Code)-1] = opCreateABC(OP_MOVE, 0, 0, 0) }),
		"constant":     mutate(func(p *FunctionProto) { p.Constants = p.Constants[:0] }),
		"proto":        mutate(func(p *FunctionProto) { p.FunctionPrototypes = nil }),
		"upvalues":     mutate(func(p *FunctionProto) { p.FunctionPrototypes[0].NumUpvalues = 1 }),
		"opcode":       mutate(func(p *FunctionProto) { p.Code[0] = 63 << 26 }),
		"jump":         mutate(func(p *FunctionProto) { p.Code[0] = opCreateASbx(OP_JMP, 0, 1000) }),
		"upvalue":      mutate(func(p *FunctionProto) { p.Code[0] = opCreateABC(OP_GETUPVAL, 0, 5, 0) }),
	}
	for name, chunk := range cases {
		_, err := Undump(chunk, "=c")
		if err == nil || !strings.Contains(err.Error(), "c: bad code") {
			t.Errorf("%s: got %v, want a bad code error", name, err)
		}
	}
}

// TestLoadBinary: the Go API's loads take binary chunks as Lua 5.1's do:
// Load, LoadString, LoadFile and DoFile (with a "#!" line too), loadfile
// and dofile; the function gets fresh upvalues and the caller's
// environment.
func TestLoadBinary(t *testing.T) {
	L := NewState()
	defer L.Close()
	proto := compileString(t, "local n = 0 return function(a, b) n = (n or 100) + 1 return a * b + n, e end", "@mul.lua")
	chunk := Dump(proto.FunctionPrototypes[0])
	L.SetGlobal("e", LString("env"))

	fn, err := L.Load(bytes.NewReader(chunk), "ignored")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	L.Push(LNumber(6))
	L.Push(LNumber(7))
	L.Call(2, 2)
	errorIfNotEqual(t, LNumber(143), L.Get(-2)) // 6*7 + (nil or 100) + 1
	errorIfNotEqual(t, LString("env"), L.Get(-1))
	L.Pop(2)

	fn, err = L.LoadString(string(chunk))
	if err != nil {
		t.Fatal(err)
	}
	errorIfNotEqual(t, "@mul.lua", fn.Proto.SourceName)
	errorIfNotEqual(t, 1, len(fn.Upvalues))

	dir := t.TempDir()
	plain := filepath.Join(dir, "f.luac")
	hashed := filepath.Join(dir, "g.luac")
	main := Dump(compileString(t, "result = (result or 0) + 1 return ...", "@main.lua"))
	if err := os.WriteFile(plain, main, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hashed, append([]byte("#!/usr/bin/env lua\n"), main...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, hashed} {
		if _, err := L.LoadFile(path); err != nil {
			t.Errorf("LoadFile %s: %v", path, err)
		}
		if err := L.DoFile(path); err != nil {
			t.Errorf("DoFile %s: %v", path, err)
		}
	}
	L.SetGlobal("plain", LString(plain))
	L.SetGlobal("hashed", LString(hashed))
	errorIfScriptFail(t, L, `
		assert(result == 2)
		assert(loadfile(plain))()
		dofile(hashed)
		assert(result == 4, result)
		assert(select(2, dofile(plain, 'x')) == nil)`)

	// a corrupt chunk is a syntax error from the Go API, too
	_, err = L.LoadString(string(chunk[:len(chunk)-2]))
	var ae *ApiError
	if !errors.As(err, &ae) || ae.Type != ApiErrorSyntax || !strings.Contains(err.Error(), "unexpected end in precompiled chunk") {
		t.Errorf("got %v", err)
	}

	// NewFunctionFromProto of a proto with upvalues
	f := L.NewFunctionFromProto(proto.FunctionPrototypes[0])
	L.Push(f)
	L.Push(LNumber(1))
	L.Push(LNumber(1))
	L.Call(2, 1)
	errorIfNotEqual(t, LNumber(102), L.Get(-1))
}

// TestLoadTextStillParsed: a text chunk's load is unchanged (a reader
// that is not a bufio.Reader, a source starting with "\27" only as a
// binary chunk).
func TestLoadTextStillParsed(t *testing.T) {
	L := NewState()
	defer L.Close()
	errorIfScriptFail(t, L, `
		assert(loadstring("return 1 + 1")() == 2)
		local f, err = loadstring("\27 not a chunk")
		assert(f == nil and err == "binary string: bad header in precompiled chunk", err)
		local f, err = loadstring("x = = 1", "=c")
		assert(err == "c:1: unexpected symbol near '='" or err:find("^c:1:"), err)`)
}

// dumpSeeds are FuzzUndump's seed corpus: dumps of functions using
// most of the format.
var dumpSeeds = []string{
	"return 1",
	"local a, b = ... return a + b",
	"local u = 1 return function(...) u = u + select('#', ...) return u, {...}, 'x\\0y', 2^53, -0, 1/0 end",
	"local t = {1, 2, 3, x = 4, [5] = {6}} for k, v in pairs(t) do t[k] = nil end return t, #t",
	"local function f(n) if n < 2 then return n end return f(n - 1) + f(n - 2) end return f(10)",
	"for i = 1, 3 do local x = i while x > 0 do x = x - 1 end end return true, false, nil",
}

func FuzzUndump(f *testing.F) {
	for _, src := range dumpSeeds {
		f.Add(Dump(compileString(f, src, "=seed")))
	}
	f.Add([]byte(dumpHeader))
	f.Add([]byte(lua51Chunk))
	f.Add([]byte(dumpHeader + "\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Undump(data, "=fuzz")
		if err != nil {
			var ue *UndumpError
			if !errors.As(err, &ue) {
				t.Fatalf("not an UndumpError: %v", err)
			}
			return
		}
		// what loads dumps back to a chunk that loads the same
		d := Dump(p)
		q, err := Undump(d, "=fuzz")
		if err != nil {
			t.Fatalf("a loaded chunk's dump does not load: %v", err)
		}
		if !bytes.Equal(Dump(q), d) {
			t.Fatal("dump of the undumped proto differs")
		}
	})
}

// TestUndumpRandom: random bytes after the header, and random changes to
// valid chunks, give an error or a function, never a panic (FuzzUndump
// explores further under go test -fuzz).
func TestUndumpRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var seeds [][]byte
	for _, src := range dumpSeeds {
		seeds = append(seeds, Dump(compileString(t, src, "=seed")))
	}
	for i := 0; i < 20000; i++ {
		var data []byte
		if i%2 == 0 {
			data = []byte(dumpHeader)
			for n := rng.Intn(64); n > 0; n-- {
				data = append(data, byte(rng.Intn(256)))
			}
		} else {
			data = append([]byte(nil), seeds[rng.Intn(len(seeds))]...)
			for n := 1 + rng.Intn(4); n > 0; n-- {
				data[8+rng.Intn(len(data)-8)] = byte(rng.Intn(256))
			}
		}
		if _, err := Undump(data, "=r"); err != nil {
			var ue *UndumpError
			if !errors.As(err, &ue) {
				t.Fatalf("not an UndumpError: %v", err)
			}
		}
	}
}
