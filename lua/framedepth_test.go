package lua

import (
	"strings"
	"testing"
)

// frameDepthScript returns from, tail-calls at, yields across, unwinds
// errors through and overflows every call depth from 0 to 13: with
// segments of 4 frames, each edge of a segment, where the segmented
// stack's Push, Pop and Last leave their short paths (state.go), and
// OP_RETURN's bottom-frame test by the frame's Idx (vm.go).
const frameDepthScript = `
local out = {}
local function rec(n) if n == 0 then return 0 end return 1 + rec(n-1) end
local function trec(n, acc) if n == 0 then return acc end return trec(n-1, acc+1) end
for d = 0, 13 do
  -- plain recursion and tail recursion at each depth
  assert(rec(d) == d); assert(trec(d, 0) == d)
  -- coroutine whose body returns at depth d
  local co = coroutine.create(function(a) local x = coroutine.yield(rec(d)+a); return x, trec(d, 0) end)
  local ok, v = coroutine.resume(co, 1); assert(ok and v == d+1, tostring(v))
  local ok2, x, y = coroutine.resume(co, "x"); assert(ok2 and x == "x" and y == d, tostring(x))
  assert(coroutine.status(co) == "dead")
  assert(not coroutine.resume(co))
  -- coroutine body that tail-calls into a Go function and a Lua function
  local co2 = coroutine.wrap(function() return select('#', 1, 2, 3) end); assert(co2() == 3)
  local co3 = coroutine.wrap(function() return trec(d, 5) end); assert(co3() == d+5)
  -- error at depth d unwound by pcall, then reuse of the stack
  local function err(n) if n == 0 then error("boom") end return (err(n-1)) end
  for k = 0, d do
    local ok, e = pcall(err, k); assert(not ok and tostring(e):find("boom"))
    assert(rec(k+3) == k+3)
  end
  -- pcall inside coroutine at depth d, yields across segment edges
  local co4 = coroutine.create(function()
    local function y(n) if n == 0 then return coroutine.yield(n) end return (y(n-1)) end
    for k = 0, d do assert(pcall(err, k) == false); y(k) end
    return "done"
  end)
  while true do local ok, v = coroutine.resume(co4); assert(ok, v); if v == "done" then break end end
  out[#out+1] = d
end
-- callstack overflow caught, then normal use
local function inf(n) return 1 + inf(n+1) end
for i = 1, 3 do local ok, e = pcall(inf, 0); assert(not ok, "no overflow") ; assert(rec(10) == 10) end
local co5 = coroutine.create(function() return pcall(inf, 0) end)
local ok, pok = coroutine.resume(co5); assert(ok and pok == false)
return table.concat(out, ",")
`

// TestFrameDepthsAtSegmentEdges runs frameDepthScript on the segmented
// and the fixed stack, at maximum sizes around segment multiples.
func TestFrameDepthsAtSegmentEdges(t *testing.T) {
	for _, min := range []bool{true, false} {
		for _, size := range []int{40, 41, 43, 44, 45, 200} {
			L := NewState(Options{MinimizeStackMemory: min, CallStackSize: int32(size)})
			if err := L.DoString(frameDepthScript); err != nil {
				t.Fatalf("min=%v size=%d: %v", min, size, err)
			}
			if got := L.Get(-1).String(); !strings.HasPrefix(got, "0,1,2") || !strings.HasSuffix(got, ",13") {
				t.Fatalf("min=%v size=%d: %s", min, size, got)
			}
			L.Close()
		}
	}
}
