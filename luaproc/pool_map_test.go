package luaproc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// poolLua exercises pool.map as a script would. The concurrency check
// waits on events, not time: the gate process holds the first workers
// until `n` of them are inside at once (so fewer would time out the
// call), and counts the most ever inside together.
const poolLua = `
function square(x, add) return x * x + (add or 0) end

function fails(x)
  if x == 3 then error("three is bad") end
  return x
end

function gate(n)
  local inside, most, held = 0, 0, {}
  while true do
    local msg, from, kind, call = process.receive()
    if msg == "enter" then
      inside = inside + 1
      if inside > most then most = inside end
      if held then
        held[#held + 1] = call
        if #held == n then
          for _, c in ipairs(held) do process.reply(c, true) end
          held = nil
        end
      else
        process.reply(call, true)
      end
    elseif msg == "leave" then
      inside = inside - 1
    elseif msg == "most" then
      process.reply(call, most)
      return
    end
  end
end

function gated(x, gate_pid)
  assert(process.call(gate_pid, "enter", 10), "the gate never opened")
  time.sleep(0.001)
  process.send(gate_pid, "leave")
  return x
end

function killer()
  while true do
    local pid = process.receive()
    process.kill(pid, "by the test")
  end
end

function victim(x, killer_pid)
  if x == 2 then
    process.send(killer_pid, process.self())
    process.receive() -- killed here
  end
  return x * 10
end

function main()
  local out = {}
  local function add(s) out[#out + 1] = s end
  process.send(process.self(), "queued before")

  local r, errs = pool.map("square", {1, 2, 3, 4, 5, 6, 7}, {concurrency = 2})
  add(table.concat(r, ",") .. " " .. tostring(errs))
  r = pool.map("square", {1, 2}, {args = {100}})
  add(table.concat(r, ","))

  r, errs = pool.map("fails", {1, 2, 3, 4}, {concurrency = 4})
  add(tostring(r[1]) .. "," .. tostring(r[2]) .. "," .. tostring(r[3]) .. "," .. tostring(r[4]))
  add(tostring(errs[1]) .. " " .. tostring(errs[3]):match("three is bad"))

  local g = process.spawn("gate", 3)
  r = pool.map("gated", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {concurrency = 3, args = {g}})
  add(#r .. " most inside at once: " .. process.call(g, "most"))

  local k = process.spawn("killer")
  r, errs = pool.map("victim", {1, 2, 3}, {args = {k}})
  process.kill(k)
  add(tostring(r[1]) .. "," .. tostring(r[2]) .. "," .. tostring(r[3]) .. " " .. tostring(errs[2]))

  r, errs = pool.map("square", {})
  add("empty: " .. #r .. " " .. tostring(errs))

  add("still queued: " .. process.receive(0))
  add(select(2, pcall(pool.map, "no_such_entry", {1})))
  add(select(2, pcall(pool.map, "square", {1}, {concurrency = 0})))
  add(select(2, pcall(pool.map, "square", {1, function() end}, {concurrency = 1})))
  add(tostring(require("pool") == pool))
  return table.concat(out, "\n")
end`

// TestPoolMap: results in order, the concurrency bound held (and
// reached), a failing item and a killed worker each their item's error,
// the caller's own messages left queued, misuse raising.
func TestPoolMap(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "pool.lua", poolLua, "main")
	require.NoError(t, err)
	want := `1,4,9,16,25,36,49 nil
101,104
1,2,nil,4
nil three is bad
10 most inside at once: 3
10,nil,30 killed: by the test
empty: 0 nil
still queued: queued before
pool.lua:83: pool.map: item 1: pool.lua: unknown entry "no_such_entry" (entries: fails, gate, gated, killer, main, square, victim)
pool.map: concurrency must be a whole number, at least 1, got 0
pool.lua:85: pool.map: item 2: process.spawn_monitor: arg1: function cannot be sent
true`
	assert.Equal(t, payload.Payloads{want}, res)
}
