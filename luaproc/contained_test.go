package luaproc

// The smaller findings of issue 27 (hostile or broken scripts), each as
// the script that showed it: JSON's trailing data and colliding keys,
// forged log lines, a sandboxed probe through a directory link, and
// receive(0) after a send to oneself.

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/log"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestJSONRefusesTrailingDataAndCollidingKeys: json.decode refuses
// anything after the first value ('{"a":1}} junk' and '[1]]' decoded);
// json.encode refuses keys that JSON would write alike ({[1]=1,
// ["1"]=2} wrote "1" twice).
func TestJSONRefusesTrailingDataAndCollidingKeys(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "json.lua", `
local a, ea = json.decode('{"a":1}} junk')
local b, eb = json.decode('[1]]')
local c = json.decode(' [1] \n')
local d, ed = json.encode({[1] = 1, ["1"] = 2})
local e, ee = json.encode({x = {[true] = 1, ["true"] = 2}})
return a, ea, b, eb, c[1], d, ed, e, ee, json.encode({[1] = 1, ["2"] = 2})`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{
		nil, "json.decode: data after the first value at line 1, column 8 (byte 8)",
		nil, "json.decode: data after the first value at line 1, column 4 (byte 4)",
		int64(1),
		nil, `json.encode: value: keys "1" and 1 would both be written as the object key "1"`,
		nil, `json.encode: value.x: keys "true" and true would both be written as the object key "true"`,
		`{"1":1,"2":2}`,
	}, res)
}

// logScript logs a message and values with newlines, and keys that are
// the logger's own fields.
const logScript = `
log.info("hello\nINFO forged line pid=7", "k", "a\r\nb", "pid", 99, "_pid", 3,
  "msg", "m", "time", "t", "level", "l", "k\nx", {s = "x\ny"}, "esc", "\27[2J")`

// TestLogLinesCannotBeForged: a newline in the message, a key or a value
// (in a table too) is escaped, so one call writes one line; a key a
// script passes that is the logger's own (pid, msg, time, level) is
// written with an underscore more, so the real pid is the only "pid".
func TestLogLinesCannotBeForged(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "log.lua", logScript, "")
	require.NoError(t, err)
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "\n"), "one line: %q", out)
	for _, want := range []string{`hello\nINFO forged line pid=7`, `k=a\r\nb`, "_pid=99", "__pid=3",
		"_msg=m", "_time=t", "_level=l", `k\nx=`, `x\ny`, `esc=\x1b[2J`} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "\x1b")

	var lines strings.Builder
	rt2, _, _ := newTestRuntime(t, Options{Logger: slog.New(log.NewWithOptions(&lines, log.Options{Formatter: log.JSONFormatter}))})
	res, err := runLua(t, rt2, "log.lua", logScript+"\nreturn process.self()", "")
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(lines.String(), "\n"), lines.String())
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines.String()), &rec))
	assert.Equal(t, float64(res[0].(int64)), rec["pid"], "the real pid, not the script's")
	assert.Equal(t, "info", rec["level"])
	assert.Equal(t, `hello\nINFO forged line pid=7`, rec["msg"])
	assert.Equal(t, float64(99), rec["_pid"])
	assert.Equal(t, "m", rec["_msg"])
}

// TestCrashReportIsOneLine: the error of a crashed process is written
// escaped in its crash report, so it cannot add log lines either.
func TestCrashReportIsOneLine(t *testing.T) {
	rt, _, logs := newTestRuntime(t, Options{})
	_, err := runLua(t, rt, "crash.lua", `
function bad() error("boom\nINFO forged line") end
function main() process.spawn("bad") end`, "main")
	require.NoError(t, err)
	logs.waitFor(t, "process crashed")
	assert.Contains(t, logs.String(), `boom\nINFO forged line`)
	assert.Equal(t, 1, strings.Count(logs.String(), "\n"), logs.String())
}

// TestSandboxProbesNothingThroughALink: without fs, a require or a
// spawn_file through a link in the program's directory to a directory
// outside it answers the same whether the file there exists or not (it
// said "outside" for one and "no file" for the other, so any path could
// be probed); a link that stays inside still works.
func TestSandboxProbesNothingThroughALink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, outside, map[string]string{"exists.lua": "return 1"})
	writeFiles(t, dir, map[string]string{"sub/mod.lua": "return 'inside'", "main.lua": `
local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok)
  return e
end
function main(dir)
  package.path = dir .. "/out/?.lua"
  local r = {err(require, "exists"), err(require, "missing"),
    err(process.spawn_file, dir .. "/out/exists.lua"), err(process.spawn_file, dir .. "/out/missing.lua"),
    err(process.spawn_file, "out/exists.lua"), err(process.spawn_file, "out/missing.lua")}
  package.path = dir .. "/in/?.lua;" .. dir .. "/up/" .. dir:match("[^/]+$") .. "/sub/?.lua"
  r[#r + 1] = require("mod")
  return unpack(r)
end`})
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink("sub", filepath.Join(dir, "in")))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "up")))
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := startFile(t, rt, filepath.Join(dir, "main.lua"), "main", dir)
	require.NoError(t, err)
	require.Len(t, res, 7)
	sameRefusal(t, res[0], res[1])
	sameRefusal(t, res[2], res[3])
	sameRefusal(t, res[4], res[5])
	assert.Equal(t, "inside", res[6], "a link inside the directory (in -> sub) still loads")
}

// TestReceiveSeesOwnSend: a message a process sends itself is in its
// mailbox at once: receive(0) right after the send took nothing. Order
// is kept, a selective receive sees it, and the mailbox bound holds.
func TestReceiveSeesOwnSend(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{MaxMailbox: 3})
	res, err := runLua(t, rt, "self.lua", `
local me = process.self()
process.send(me, "a")
local first = process.receive(0)
process.send(me, 1) process.send(me, 2) process.send(me, 3)
local full, why = process.send(me, 4)
local picked = process.receive{match = function(m) return m == 2 end, timeout = 0}
local x, y = process.receive(0), process.receive(0)
return first, full, why, picked, x, y, process.receive(0)`, "")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"a", nil, "mailbox full", int64(2), int64(1), int64(3), nil, "timeout"}, res)
}
