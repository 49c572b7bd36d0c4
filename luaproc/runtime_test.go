package luaproc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

func TestSyntaxErrorNamesFileAndLine(t *testing.T) {
	_, err := Compile("bad.lua", "local x = 1\nlocal y = = 2\n")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "bad.lua", se.File)
	assert.Equal(t, 2, se.Line)
	assert.Regexp(t, `^bad\.lua:2: .*near '='`, err.Error())

	_, err = Compile("eof.lua", "function f()\n  return 1\n")
	require.ErrorAs(t, err, &se)
	assert.Regexp(t, `^eof\.lua:3: .* near '<eof>'$`, err.Error()) // lua5.1's line

	_, err = Compile("shebang.lua", "#!/usr/bin/env luarun\nreturn 1 +\n")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 3, se.Line, "the #! line still counts")
}

func TestRuntimeErrorHasFileLineAndTraceback(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "scripts/x.lua", `
local function load(cfg)
  return cfg.name
end
function main()
  time.sleep(0)
  local name = load(nil)
  return name
end
`, "")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	assert.Regexp(t, `^scripts/x\.lua:3: .*nil`, se.Message)
	assert.Contains(t, se.Traceback, "stack traceback:")
	assert.Contains(t, se.Traceback, "scripts/x.lua:3: in function 'load'")
	assert.Contains(t, se.Traceback, "scripts/x.lua:7: in function 'main'")
	assert.NotContains(t, se.Traceback, "prelude")
}

func TestUnknownEntryNamesTheRealOnes(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "e.lua", "function main() end\nfunction worker() end\nlocal function hidden() end\n", "wrokr")
	var ee *EntryError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, []string{"main", "worker"}, ee.Entries)
	assert.Equal(t, `e.lua: unknown entry "wrokr" (entries: main, worker)`, err.Error())

	_, err = runLua(t, rt, "m.lua", "return {run = function() end}", "main")
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, []string{"run"}, ee.Entries)
}

func TestChunkIsTheProgramWithoutMain(t *testing.T) {
	rt, out, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "prog.lua", `
local a, b = ...
print(a, b, arg[0], arg[1], #arg)
time.sleep(0)
return a .. b
`, "", "x", "y")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"xy"}, res)
	assert.Equal(t, "x\ty\tprog.lua\tx\t2\n", out.String())

	// main gets the arguments; the chunk ran first.
	res, err = runLua(t, rt, "main.lua", `
local loaded = "chunk ran"
function main(n) return loaded, n * 2 end
`, "", int64(21))
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"chunk ran", int64(42)}, res)
}

func TestKillBusyLoopFromGo(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("busy.lua", "while true do end")
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "")
	require.NoError(t, err)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, rt.Kill(h.PID(), "test over"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = h.Wait(ctx)
	var ke *KilledError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "killed: test over", err.Error())
}

// TestPermissions: the embedding default allows none of os, io, fs, http
// and exec; each named in Options.Allow is there, the others still raise
// docs/lua-api.md's message (on use, and through require too).
func TestPermissions(t *testing.T) {
	uses := map[string]string{
		"os":   "return os.getenv('HOME')",
		"io":   "return io.write('')",
		"fs":   "return fs.list('.')",
		"http": "return http.get",
		"exec": "return exec.run",
	}
	denied := func(t *testing.T, rt *Runtime, module, src string) {
		_, err := runLua(t, rt, "s.lua", src, "")
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), module+" is not allowed (run without --sandbox or with --allow "+module+")", src)
	}
	rt, _, _ := newTestRuntime(t, Options{})
	for module, src := range uses {
		denied(t, rt, module, src)
		denied(t, rt, module, "return require('"+module+"').x")
	}
	denied(t, rt, "fs", "return loadfile('x.lua')")
	denied(t, rt, "fs", "return dofile('x.lua')")
	// os and io without exec: they cannot run commands either
	rt, _, _ = newTestRuntime(t, Options{Allow: []string{"os", "io"}})
	denied(t, rt, "exec", "return os.execute('true')")
	denied(t, rt, "exec", "return io.popen('true')")
	rt, _, _ = newTestRuntime(t, Options{Allow: []string{"os", "io", "exec"}})
	res, err := runLua(t, rt, "s.lua", "local f = io.popen('echo hi') local out = f:read('*a') f:close() return os.execute('true'), out", "")
	require.NoError(t, err)
	assert.Equal(t, []any{int64(0), "hi\n"}, []any(res))
	for _, allowed := range Permissions() {
		rt, _, _ := newTestRuntime(t, Options{Allow: []string{allowed}})
		for module, src := range uses {
			if module != allowed {
				denied(t, rt, module, src)
				continue
			}
			_, err := runLua(t, rt, "s.lua", src, "")
			assert.NoError(t, err, "%s with Allow %s", src, allowed)
		}
	}
}

// TestApplicationCommand: a Go command registered as db.query, completed
// later from another goroutine, with results, errors and a panic.
func TestApplicationCommand(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	require.NoError(t, rt.Register("db.query", func(c Call) error {
		sql, _ := c.Args[0].(string)
		switch sql {
		case "fail":
			return errors.New("no such table")
		case "panic":
			panic("handler bug")
		}
		go func() {
			time.Sleep(5 * time.Millisecond)
			c.Complete([]any{map[string]any{"id": int64(1), "q": sql}}, int64(1))
		}()
		return nil
	}))
	require.Error(t, rt.Register("noperiod", nil))
	require.Error(t, rt.Register("time.extra", nil))
	res, err := runLua(t, rt, "db.lua", `
local rows, n = db.query("select", {limit = 1})
assert(rows[1].id == 1 and rows[1].q == "select" and n == 1)
local r, err = db.query("fail")
assert(r == nil and err:find("no such table"), err)
local r2, err2 = db.query("panic")
assert(r2 == nil and err2:find("handler bug"), err2)
local ok, perr = pcall(db.query, print)
assert(not ok and perr:find("arg1: function cannot be sent", 1, true), perr)
return require("db") == db
`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{true}, res)
}

// TestInbox: Go sends into a Lua process and receives what it sends back.
func TestInbox(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	in, err := rt.NewInbox()
	require.NoError(t, err)
	defer in.Close()
	s, err := rt.LoadString("svc.lua", `
function main(reply_to)
  process.send(reply_to, 42)
  process.send(reply_to, 2.5)
  process.send(reply_to, true)
  process.send(reply_to, "ready")
  while true do
    local msg, from = process.receive()
    if msg.op == "stop" then return "bye" end
    process.send(from, {sum = msg.a + msg.b})
  end
end`)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "main", int64(in.PID()))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, want := range []any{int64(42), 2.5, true, "ready"} { // scalars arrive as payload values
		m, err := in.Receive(ctx)
		require.NoError(t, err)
		assert.Equal(t, Message{From: h.PID(), Kind: "message", Value: want}, m)
	}
	for i := range int64(20) {
		require.NoError(t, in.Send(h.PID(), map[string]any{"op": "add", "a": i, "b": int64(1)}))
		m, err := in.Receive(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"sum": i + 1}, m.Value)
	}
	require.NoError(t, rt.Send(h.PID(), map[string]any{"op": "stop"}))
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []any{"bye"}, res)
	require.Error(t, rt.Send(h.PID(), "late"), "the process has ended")
	require.Error(t, rt.Send(in.PID(), func() {}), "not a payload value")
}

// TestPrintLinesDoNotInterleave: many processes printing long lines at
// once; every line arrives whole.
func TestPrintLinesDoNotInterleave(t *testing.T) {
	rt, out, _ := newTestRuntime(t, Options{})
	s, err := rt.LoadString("p.lua", `
function main(id)
  local line = string.rep(string.char(65 + id % 26), 500)
  for i = 1, 20 do print(id, line); if i % 5 == 0 then time.sleep(0) end end
end`)
	require.NoError(t, err)
	var hs []Handle
	for i := range int64(50) {
		h, err := rt.Start(context.Background(), s, "main", i)
		require.NoError(t, err)
		hs = append(hs, h)
	}
	for _, h := range hs {
		_, err := h.Wait(context.Background())
		require.NoError(t, err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 50*20)
	for _, l := range lines {
		var id int
		var body string
		_, err := fmt.Sscanf(l, "%d\t%s", &id, &body)
		require.NoError(t, err, l)
		require.Equal(t, strings.Repeat(string(rune(65+id%26)), 500), body)
	}
}

// TestGoPanicInsideLuaBecomesProcessError: a Go function that panics
// while Lua calls it ends only that process.
func TestGoPanicInsideLuaBecomesProcessError(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	var once sync.Once
	require.NoError(t, rt.Register("bad.sync", func(c Call) error {
		once.Do(func() {})
		c.Complete([]any{func() {}}) // not a payload value
		return nil
	}))
	res, err := runLua(t, rt, "p.lua", `return bad.sync()`, "")
	require.NoError(t, err, "a result with no Lua form fails the call, not the process")
	assert.Equal(t, payload.Payloads{nil, "result[1]: func() cannot be sent"}, res)
}
