package luaproc

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestXpcallNeverRaises: a handler that fails makes xpcall return false,
// "error in error handling" (Lua 5.1), the handler's first result is the
// message, and a handler may block.
func TestXpcallNeverRaises(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "xp.lua", `
function main()
  local a, b = xpcall(function() error("a") end, function() error("b") end)
  local c, d, e = xpcall(function() error("a") end, function() return 1, 2 end)
  local f, g = xpcall(42, function(m) return "h: " .. m end)
  local h, i = xpcall(function() error("a") end, function() time.sleep(0.001) return "slept" end)
  return a, b, c, d, e, f, g, h, i
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, "error in error handling", false, int64(1), nil,
		false, "h: attempt to call a number value", false, "slept"}, res)
}

// TestByteOrderMarkSkipped: a script saved with a UTF-8 BOM runs.
func TestByteOrderMarkSkipped(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "bom.lua", "\xef\xbb\xbfreturn 1 + 1", "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(2)}, res)
}

// TestRandomPerProcess: math.randomseed makes a process's sequence
// reproducible; unseeded processes draw different numbers; 5.1's
// argument errors.
func TestRandomPerProcess(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "rnd.lua", `
function draw() return math.random(1000000000) end
function main()
  math.randomseed(7)
  local a = {math.random(), math.random(10), math.random(3, 4)}
  math.randomseed(7)
  local b = {math.random(), math.random(10), math.random(3, 4)}
  local same = a[1] == b[1] and a[2] == b[2] and a[3] == b[3]
  local x, y = process.spawn("draw"), process.spawn("draw")
  local _, dx = process.wait(x)
  local _, dy = process.wait(y)
  local in_range = true
  for i = 1, 1000 do
    local r = math.random(3, 5)
    in_range = in_range and r >= 3 and r <= 5 and r == math.floor(r)
  end
  return same, dx ~= dy, in_range, (select(2, pcall(math.random, 0))), (select(2, pcall(math.random, 1, 2, 3)))
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 5)
	assert.Equal(t, payload.Payloads{true, true, true}, res[:3])
	assert.Contains(t, res[3], "interval is empty")
	assert.Contains(t, res[4], "wrong number of arguments")
}

// TestSandboxKeepsTheClock: without the os permission, os.time, clock,
// date and difftime still work (they only read the clock); the rest of
// os does not.
func TestSandboxKeepsTheClock(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{}) // no permissions
	res, err := runLua(t, rt, "clock.lua", `
return type(os.time()), type(os.clock()), type(os.date("%Y")), os.difftime(10, 4),
  select(2, pcall(function() return os.getenv("HOME") end))`, "")
	require.NoError(t, err)
	require.Len(t, res, 5)
	assert.Equal(t, payload.Payloads{"number", "number", "string", int64(6)}, res[:4])
	assert.Contains(t, res[4], "os is not allowed")
}

// TestJSONValuesSurviveSend: a decoded document with nulls and an empty
// object, sent to another process and back, encodes to the same JSON;
// the Go side sees payload.Null.
func TestJSONValuesSurviveSend(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "js.lua", `
function echo() local m, from = process.receive() process.send(from, m) end
function main()
  local doc = '{"a":null,"arr":[],"empty":{},"list":[1,null,3]}'
  local p = process.spawn("echo")
  process.send(p, json.decode(doc))
  local back = process.receive()
  return json.encode(back) == doc, back.list[2] == json.null, #back.list, json.decode(doc).list
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true, true, int64(3), []any{int64(1), payload.Null, int64(3)}}, res)
}

// TestExecTimeoutPartialInLua: exec.run that times out returns nil, err
// and {stdout=, stderr=}: what the command wrote before it was killed.
func TestExecTimeoutPartialInLua(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"exec", "fs"}})
	marker := t.TempDir() + "/written"
	res, err := runLua(t, rt, "ex.lua", `
local marker = ...
local r, err, partial = exec.run("sh", {"-c", "echo started; touch " .. marker .. "; sleep 60"}, {timeout = 0.5})
return r, err, partial.stdout, (fs.read(marker)) ~= nil`, "", marker)
	require.NoError(t, err)
	require.Len(t, res, 4)
	assert.Equal(t, payload.Payloads{nil, "exec.run sh: timed out after 500ms"}, res[:2])
	if res[3] == true { // the shell wrote before the timeout
		assert.Equal(t, "started\n", res[2])
	}
}

// TestDebugLibrary: getinfo, getlocal, getupvalue/setupvalue of the
// script's functions, levels across pcall, traceback, and what is left
// out (built-ins' upvalues and locals, the registry, hooks, metatables).
func TestDebugLibrary(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "dbg.lua", `
local up = 10
local function g() return up end
local function locals(a, b) local c = a + b; return debug.getlocal(1, 3) end
local function caller_line() return debug.getinfo(2, "l").currentline end
function main()
  local info = debug.getinfo(1, "Sln")
  local name, value = locals(1, 2)
  local upname, upvalue = debug.getupvalue(g, 1)
  local setname = debug.setupvalue(g, 1, 20)
  -- inside pcall, level 2 is pcall (a Go function) and level 3 the caller
  local _, what2, line3 = pcall(function() return debug.getinfo(2, "S").what, debug.getinfo(3, "l").currentline end)
  local tb = debug.traceback("msg")
  local ok, xtb = xpcall(function() error("boom") end, debug.traceback)
  local left_out = select("#", debug.getupvalue(pcall, 1)) == 0
  return info.short_src, info.source, info.what, info.currentline, name, value, upname, upvalue, setname, g(),
    what2, line3, caller_line(), tb:match("^msg\nstack traceback:\n\tdbg.lua:13: in function 'main'") ~= nil,
    ok, xtb:match("^dbg.lua:14: boom\nstack traceback:\n\t%[C%]: in function 'error'\n\tdbg.lua:14: in function <dbg.lua:14>") ~= nil,
    left_out, debug.getinfo(100)
end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"dbg.lua", "@dbg.lua", "Lua", int64(7), "c", int64(3), "up", int64(10), "up", int64(20),
		"C", int64(12), int64(17), true, false, true, true, nil}, res)
}

// TestDebugSources: a chunk of load or loadstring has its chunk name as
// its source, a script's is "@name" (calls.lua of the 5.1 suite checks it).
func TestDebugSources(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "src.lua", `
local parts, i = {"return ", "1"}, 0
local loaded = load(function() i = i + 1; return parts[i] end, "modname")
return debug.getinfo(loaded).source, debug.getinfo(loadstring("return 1", "=named")).source,
  debug.getinfo(1, "S").source`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"modname", "=named", "@src.lua"}, res)
}

// TestDebugSetmetatable: the metatables of numbers, booleans, nil and
// strings that debug.setmetatable sets are the calling process's alone,
// and gone when its state is recycled; one of luarun's metatables
// (json.null's, a module proxy's, _G's) cannot be replaced.
func TestDebugSetmetatable(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	for range 10 {
		res, err := runLua(t, rt, "a.lua", `
debug.setmetatable(10, {__index = function(a, b) return a + b end})
debug.setmetatable(nil, {__add = function(a, b) return (a or 0) + (b or 0) end})
local sum, plus = (10)[3], nil + 5
debug.setmetatable("", {__index = {shout = function(s) return s .. "!" end}})
local shout = ("hi"):shout()
local refused = {}
for _, v in ipairs({json.null, _G, string}) do
  refused[#refused + 1] = tostring(select(2, pcall(debug.setmetatable, v, nil)))
end
return sum, plus, shout, table.concat(refused, "|"), debug.setmetatable({}, nil)`, "")
		require.NoError(t, err)
		// _G and string are the process's own tables (lua/cow.go); json.null is shared
		require.Equal(t, payload.Payloads{int64(13), int64(5), "hi!",
			"debug.setmetatable: cannot replace a metatable of luarun's (json.null)|true|true", true}, res)
		res, err = runLua(t, rt, "b.lua", `return getmetatable(1), getmetatable(nil), ("x"):upper(), (pcall(function() return nil + 1 end))`, "")
		require.NoError(t, err)
		require.Len(t, res, 4)
		require.Equal(t, payload.Payloads{nil, nil, "X", false}, res)
	}
}

// TestFileOperations: fs.mkdir (with and without parents), fs.append,
// fs.stat, fs.rename and fs.remove, and their errors.
func TestFileOperations(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	res, err := runLua(t, rt, "fso.lua", `
local d = ...
assert(fs.mkdir(d .. "/a/b", true))
assert(fs.mkdir(d .. "/a/b", true)) -- there already: fine with parents
local _, nested = fs.mkdir(d .. "/x/y")
assert(fs.append(d .. "/f", "one\n"))
assert(fs.append(d .. "/f", "two\n"))
local st = fs.stat(d .. "/f")
local _, missing = fs.stat(d .. "/nope")
assert(fs.rename(d .. "/f", d .. "/g"))
local moved = fs.read(d .. "/g")
local _, notEmpty = fs.remove(d .. "/a")
assert(fs.remove(d .. "/g") and fs.remove(d .. "/a/b") and fs.remove(d .. "/a"))
return nested, st.size, st.is_dir, st.mode, type(st.mtime), fs.stat(d).is_dir, missing, moved, notEmpty,
  #fs.list(d), select(2, pcall(fs.mkdir, d, "yes"))`, "", t.TempDir())
	require.NoError(t, err)
	require.Len(t, res, 11)
	assert.Contains(t, res[0], "/x/y: no such file or directory")
	assert.Equal(t, payload.Payloads{int64(8), false, newFileMode(t), "number", true}, res[1:6])
	assert.Contains(t, res[6], "fs.stat ")
	assert.Equal(t, "one\ntwo\n", res[7])
	assert.Contains(t, res[8], "directory not empty")
	assert.Equal(t, int64(0), res[9])
	assert.Contains(t, res[10], "argument 2: boolean expected, got string")
}

// newFileMode is the mode a file made with 0666 gets (the umask off).
func newFileMode(t *testing.T) int64 {
	t.Helper()
	path := t.TempDir() + "/f"
	require.NoError(t, os.WriteFile(path, nil, 0o666))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return int64(fi.Mode().Perm())
}

// TestFileHandles: fs.open with its modes, read formats, write chaining,
// seek, lines (a handle's, and fs.lines's, which blocks in a for
// iterator), errors; the files a process leaves open are closed when it
// ends.
func TestFileHandles(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	res, err := runLua(t, rt, "fh.lua", `
function leaves_open(path) assert(fs.open(path)) end
function main(d)
  local f = assert(fs.open(d .. "/x.txt", "w"))
  assert(f:write("line one\n", "line two\n", 42, "\n"):write("last"))
  assert(f:close())
  local _, closed = f:write("more")
  f = assert(fs.open(d .. "/x.txt"))
  local a, b, c, rest, eof = f:read(), f:read("*L"), f:read("n"), f:read("a"), f:read("l")
  local pos, three, cur = f:seek("set", 5), f:read(3), f:seek()
  f:close()
  local seen = {}
  for line in fs.lines(d .. "/x.txt") do seen[#seen + 1] = line end
  local g = assert(fs.open(d .. "/x.txt", "a+"))
  g:write("\nappended")
  g:seek("set", 0)
  local n = 0
  for _ in g:lines() do n = n + 1 end
  g:close()
  local _, missing = fs.open(d .. "/nope")
  local ok, linesErr = pcall(fs.lines, d .. "/nope")
  local ok2, modeErr = pcall(fs.open, d .. "/x.txt", "q")
  assert(process.wait(process.spawn("leaves_open", d .. "/x.txt")))
  return closed, a, b, c, rest, eof, pos, three, cur, table.concat(seen, "|"), n, missing, ok, linesErr, ok2, modeErr
end`, "main", t.TempDir())
	require.NoError(t, err)
	require.Len(t, res, 16)
	assert.Contains(t, res[0], "attempt to use a closed file")
	assert.Equal(t, payload.Payloads{"line one", "line two\n", int64(42), "\nlast", nil, int64(5), "one", int64(8),
		"line one|line two|42|last", int64(5)}, res[1:11])
	assert.Contains(t, res[11], "no such file or directory")
	assert.Equal(t, false, res[12])
	assert.Contains(t, res[13], "fh.lua:21: fs.open ")
	assert.Equal(t, false, res[14])
	assert.Contains(t, res[15], `invalid mode "q"`)
	// closed by the IO's goroutines once the process has ended (20 s only bounds a hang)
	require.Eventually(t, func() bool { return rt.io.OpenFiles() == 0 }, 20*time.Second, time.Millisecond,
		"the files a process left open are closed at its end")
}

// TestReviewedEdges: a recycled state does not hand its random generator
// to the next process; debug.getlocal never shows luarun's own frames; a
// coroutine's function is not named as the entry in a traceback.
func TestReviewedEdges(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "edges.lua", `
function seeder() math.randomseed(42) return math.random(1000000) end
function drawer() return math.random(1000000) end
local function h()
  local names = {}
  for level = 1, 6 do
    if not debug.getinfo(level) then break end
    for i = 1, 20 do
      local n = debug.getlocal(level, i)
      if not n then break end
      names[#names + 1] = n
    end
  end
  return table.concat(names, ",")
end
local function g() return (h()) end
local function f() return g() end
function main()
  local same = 0
  for i = 1, 20 do
    local _, a = process.wait(process.spawn("seeder"))
    math.randomseed(42); math.random(1000000)
    local expected = math.random(1000000) -- what the seeded sequence gives next
    local _, b = process.wait(process.spawn("drawer"))
    if b == expected then same = same + 1 end
  end
  local tb
  coroutine.resume(coroutine.create(function() tb = debug.traceback() end))
  return same, f(), tb:find("in function 'main'", 1, true) == nil
end`, "main")
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.Less(t, res[0].(int64), int64(5), "unseeded processes continued a seeded sequence")
	for _, name := range []string{"chunk", "entry", "fn"} { // boot's locals
		assert.NotContains(t, ","+res[1].(string)+",", ","+name+",")
	}
	assert.Equal(t, true, res[2])
}

// TestLinesThenRead: a read after leaving a lines loop early starts at
// the line after the last one the loop had, although the iterator read
// ahead (with and without a final line end).
func TestLinesThenRead(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	res, err := runLua(t, rt, "lr.lua", `
function main(d)
  local out = {}
  for _, text in ipairs({"one\ntwo\nthree\nfour\n", "one\ntwo\nthree\nfour"}) do
    local path = d .. "/f.txt"
    assert(fs.write(path, text))
    local f = assert(fs.open(path))
    for line in f:lines() do if line == "two" then break end end
    out[#out + 1] = f:read("a")
    f:seek("set", 0)
    local n = 0
    for _ in f:lines() do n = n + 1 end
    out[#out + 1] = n
    f:close()
  end
  return unpack(out)
end`, "main", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"three\nfour\n", int64(4), "three\nfour", int64(4)}, res)
}

// TestLinesPrefetchedThenRead: on a file of many batches (the IO layer
// reads batches ahead while the loop runs), stopping a lines loop at any
// line and then reading, seeking or writing starts right after that line,
// whatever was read ahead; two loops over one handle share its lines.
func TestLinesPrefetchedThenRead(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	d := t.TempDir()
	var text strings.Builder
	for i := 1; i <= 40000; i++ { // ~350 KB: several batches of ~64 KB
		fmt.Fprintf(&text, "line %d\n", i)
	}
	require.NoError(t, os.WriteFile(d+"/f.txt", []byte(text.String()), 0o644))
	res, err := runLua(t, rt, "pf.lua", `
function main(path)
  local out = {}
  for _, stop in ipairs({1, 700, 5000, 12345, 39999}) do
    local f = assert(fs.open(path, "r+"))
    for line in f:lines() do if line == "line " .. stop then break end end
    out[#out + 1] = f:read("l")
    out[#out + 1] = f:seek("cur")
    f:close()
  end
  local f = assert(fs.open(path))
  local a, b = f:lines(), f:lines()
  local first, second, n = a(), b(), 2
  for _ in a do n = n + 1 end
  f:close()
  local total, sum = 0, 0
  for line in fs.lines(path) do total = total + 1; sum = sum + tonumber(line:match("%d+")) end
  out[#out + 1] = first .. "|" .. second .. "|" .. n .. "|" .. total .. "|" .. sum
  return unpack(out)
end`, "main", d+"/f.txt")
	require.NoError(t, err)
	offset := func(line int) int64 { // where the line starts; the file's size past its end
		if i := strings.Index(text.String(), fmt.Sprintf("line %d\n", line)); i >= 0 {
			return int64(i)
		}
		return int64(text.Len())
	}
	want := payload.Payloads{}
	for _, stop := range []int{1, 700, 5000, 12345, 39999} {
		want = append(want, fmt.Sprintf("line %d", stop+1), offset(stop+2))
	}
	want = append(want, "line 1|line 2|40000|40000|800020000")
	assert.Equal(t, want, res)
}

// TestFileHandleEdges: fs.open refuses what is not a regular file (a
// FIFO's open or read could wait for ever); a negative count raises; a
// lines loop raises what fails (a directory, a closed handle) instead of
// ending quietly; close drops the read-ahead; an open that completes
// after its process was killed leaves no file open.
func TestFileHandleEdges(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	d := t.TempDir()
	require.NoError(t, syscall.Mkfifo(d+"/fifo", 0o600))
	require.NoError(t, os.WriteFile(d+"/f.txt", []byte("a\nb\nc\n"), 0o644))
	res, err := runLua(t, rt, "edges.lua", `
function main(d)
  local _, fifo = fs.open(d .. "/fifo")
  local f = assert(fs.open(d .. "/f.txt"))
  local ok1, neg = pcall(f.read, f, -1)
  local ok2, dir = pcall(function() for _ in fs.lines(d) do end end)
  local got = {}
  local ok3, closed = pcall(function()
    for l in f:lines() do got[#got + 1] = l; f:close() end
  end)
  return fifo, ok1, neg, ok2, dir, ok3, closed, table.concat(got, ",")
end`, "main", d)
	require.NoError(t, err)
	require.Len(t, res, 8)
	assert.Contains(t, res[0], "not a regular file")
	assert.Equal(t, false, res[1])
	assert.Contains(t, res[2], "a count must not be negative")
	assert.Equal(t, false, res[3])
	assert.Contains(t, res[4], "is a directory")
	assert.Equal(t, false, res[5])
	assert.Contains(t, res[6], "attempt to use a closed file")
	assert.Equal(t, "a", res[7], "no line after the close")
	require.Eventually(t, func() bool { return rt.io.OpenFiles() == 0 }, 20*time.Second, time.Millisecond)
}

// TestNumericForTakesNumericStrings: a numeric for converts numeric
// strings as Lua 5.1 does (command-line arguments arrive as strings), and
// names a bad bound with 5.1's words.
func TestNumericForTakesNumericStrings(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "for.lua", `
local s = 0
for i = "1", "3", "1" do s = s + i end
for i = "0x10", 17 do s = s + i end
local _, e1 = pcall(function() for i = 1, "x" do end end)
local _, e2 = pcall(function() for i = {}, 2 do end end)
local _, e3 = pcall(function() for i = 1, 2, "y" do end end)
return s, e1, e2, e3`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{int64(39), "for.lua:5: 'for' limit must be a number",
		"for.lua:6: 'for' initial value must be a number", "for.lua:7: 'for' step must be a number"}, res)
}

// TestFailedMethodKeepsTheReadAhead: a file method that raises on its
// arguments leaves what a lines loop read ahead, so the next read starts
// right after the loop's last line (a review found the read-ahead lost).
func TestFailedMethodKeepsTheReadAhead(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	res, err := runLua(t, rt, "fm.lua", `
function main(d)
  local path = d .. "/f.txt"
  local lines = {}
  for i = 1, 10 do lines[i] = "line " .. i end
  assert(fs.write(path, table.concat(lines, "\n") .. "\n"))
  local f = assert(fs.open(path))
  for line in f:lines() do if line == "line 2" then break end end
  local bad = pcall(f.read, f, "bogus")
  local bad_seek = pcall(f.seek, f, "nowhere")
  return bad, bad_seek, f:read("l"), f:seek("cur")
end`, "main", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, false, "line 3", int64(21)}, res)
}

// TestLinesLoopStaysShortSteps: a lines loop takes a few prefetched
// batches without a yield, then yields, so a long file is read in many
// steps (a step limit or a process's other tasks see a series of short
// steps, not one step as long as the file; without the cap this loop ran
// in 4 to 6 steps; with it, at least 13).
func TestLinesLoopStaysShortSteps(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"fs"}})
	path := t.TempDir() + "/big.txt"
	line := strings.Repeat("x", 99) + "\n"
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat(line, 40000)), 0o644)) // 4 MB: ~61 batches
	before := rt.SchedulerStats().Steps
	// work on each line, so that the prefetch keeps ahead of the loop
	res, err := runLua(t, rt, "ls.lua", `function main(path)
  local n, s = 0, 0
  for _ in fs.lines(path) do n = n + 1; for i = 1, 40 do s = s + i end end
  return n
end`, "main", path)
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{int64(40000)}, res)
	batches := 4000000 / (64 << 10)
	assert.GreaterOrEqual(t, rt.SchedulerStats().Steps-before, uint64(batches/(maxLinesTaken+1)), "steps for %d batches", batches)
	t.Logf("steps %d", rt.SchedulerStats().Steps-before)
}
