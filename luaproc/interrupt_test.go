package luaproc

// Long built-ins stop as Lua code does (LUA_API.md "Hostile or broken
// scripts"): a kill, --max-step and shutdown end a process busy inside
// the pattern matcher, and an error unwinds through nested gsub
// callbacks at once. The bounds below only catch a hang on a loaded
// machine: before the built-ins checked their state's interrupt, each of
// these ran for minutes.

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// hardMatchLua: each kind runs the matcher for minutes (exponential
// backtracking) after telling parent it is about to.
const hardMatchLua = `
local s, p = ("a"):rep(30), ("a*"):rep(30) .. "b"
local kinds = {
  find = function() return string.find(s, p) end,
  match = function() return s:match(p) end,
  gmatch = function() for _ in s:gmatch(p) do end end,
  gsub = function() return s:gsub(p, "x") end,
  gsubfn = function() return ("x"):gsub("x", function() return s:gsub(p, "x") end) end,
  loop = function() while true do end end, -- Lua code, for comparison
}
function busy(kind, parent)
  if parent then process.send(parent, "matching") end
  kinds[kind]()
end
`

var hardMatchKinds = []string{"find", "match", "gmatch", "gsub", "gsubfn"}

// TestKillStopsALongMatch: process.kill ends a process inside the
// matcher, with the reason of the kill.
func TestKillStopsALongMatch(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	res, err := runLua(t, rt, "match.lua", hardMatchLua+`
function main(...)
  local out = {}
  for _, kind in ipairs({...}) do
    local pid = process.spawn("busy", kind, process.self())
    assert(process.receive() == "matching")
    process.sleep(0.05) -- well inside the match (it runs for minutes)
    process.kill(pid, kind)
    local ok, err = process.wait(pid)
    out[#out + 1] = tostring(ok) .. " " .. tostring(err)
  end
  return table.concat(out, "|")
end`, "main", toAny(hardMatchKinds)...)
	require.NoError(t, err)
	var want []string
	for _, k := range hardMatchKinds {
		want = append(want, "false killed: "+k)
	}
	assert.Equal(t, payload.Payloads{strings.Join(want, "|")}, res)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestMaxStepStopsALongMatch: a step past MaxStep inside the matcher ends
// the process with the step-limit error naming the line of the call.
func TestMaxStepStopsALongMatch(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2, MaxStep: 100 * time.Millisecond})
	_, err := runLua(t, rt, "match.lua", hardMatchLua, "busy", "find")
	var se *ScriptError
	require.ErrorAs(t, err, &se)
	var sle *scheduler.StepLimitError
	require.ErrorAs(t, err, &sle)
	assert.Regexp(t, `^pid \d+ match.lua:4: ran 100ms without blocking$`, se.Message)
}

// TestShutdownStopsALongMatch: Shutdown ends a process inside the
// matcher at once, not at the end of its grace.
func TestShutdownStopsALongMatch(t *testing.T) {
	rt, err := New(Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := rt.LoadString("match.lua", hardMatchLua)
	require.NoError(t, err)
	inbox, err := rt.NewInbox()
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "busy", "gsub", int64(inbox.PID()))
	require.NoError(t, err)
	_, err = inbox.Receive(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, rt.Shutdown(ctx), "nothing abandoned")
	_, err = h.Result()
	require.ErrorIs(t, err, scheduler.ErrShutdown)
}

// TestErrorThroughNestedGsubsIsQuick: an error raised 8,000 gsub
// callbacks deep reaches the pcall at once (the matcher used to recover
// and raise again at every level: quadratic, 17 s for 8,000 levels).
func TestErrorThroughNestedGsubsIsQuick(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1})
	start := time.Now()
	res, err := runLua(t, rt, "nest.lua", `
local depth = 0
local function f()
  depth = depth + 1
  if depth >= 8000 then error("bottom") end
  return (string.gsub("x", "x", f))
end
function main() return pcall(f) end`, "main")
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{false, "nest.lua:5: bottom"}, res)
	assert.Less(t, time.Since(start), 5*time.Second, "a quadratic unwinding")
}

// TestJSONChecksTheInterrupt: json.encode and json.decode raise the
// interrupt's error when the flag is up, on small input (each value
// converted is a step) and large (the decoder calls a stop hook that
// checks the flag, inside one long string too). TestKillStopsBigJSON
// stops an encode in the encoder.
func TestJSONChecksTheInterrupt(t *testing.T) {
	big := `[` + strings.Repeat(`{"a": [1, 2, "three"]},`, 20000) + `0]`
	for _, c := range []struct {
		name string
		fn   lua.LGFunction
		arg  func(L *lua.LState) lua.LValue
	}{
		{"decode", jsonDecode, func(*lua.LState) lua.LValue { return lua.LString(`[1, 2, 3]`) }},
		{"decode big", jsonDecode, func(*lua.LState) lua.LValue { return lua.LString(big) }},
		{"decode string", jsonDecode, func(*lua.LState) lua.LValue {
			return lua.LString(`"` + strings.Repeat(`x\n`, 1<<20) + `"`)
		}},
		{"encode", jsonEncode, func(L *lua.LState) lua.LValue {
			t := L.NewTable()
			for i := 1; i <= 10; i++ {
				t.Append(lua.LNumber(i))
			}
			return t
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			L := lua.NewState()
			defer L.Close()
			arg := c.arg(L)
			in := &lua.Interrupt{Check: func(*lua.LState) error { return context.Canceled }}
			in.Flag.Store(cancelFlag)
			L.SetInterrupt(in)
			err := L.CallByParam(lua.P{Fn: L.NewFunction(c.fn), NRet: 1, Protect: true}, arg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), context.Canceled.Error())
		})
	}
}

// TestLongMatchStopsSoon measures how long a kill takes to end a
// process inside the matcher, from process.kill to process.wait's return
// (the contract: 10 ms), beside the same for a Lua loop; the bound only
// catches a hang.
func TestLongMatchStopsSoon(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 2})
	for _, kind := range []string{"find", "loop"} {
		res, err := runLua(t, rt, "match.lua", hardMatchLua+`
function main(kind)
  local times = {}
  for i = 1, 21 do
    local pid = process.spawn("busy", kind, process.self())
    assert(process.receive() == "matching")
    process.sleep(0.01)
    local t0 = time.monotonic()
    process.kill(pid, "enough")
    process.wait(pid)
    times[i] = time.monotonic() - t0
  end
  table.sort(times)
  return times[11], times[21]
end`, "main", kind)
		require.NoError(t, err)
		median := time.Duration(res[0].(float64) * float64(time.Second))
		worst := time.Duration(res[1].(float64) * float64(time.Second))
		t.Logf("%s: kill to wait's return, median %v, slowest %v of 21", kind, median, worst)
		assert.Less(t, worst, 5*time.Second)
	}
}
