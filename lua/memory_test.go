package lua

// Memory accounting's hooks (memory.go, goroutine.go, measure.go) with an
// owner of the test's: what it is charged, when it refuses.

import (
	"strings"
	"testing"
)

// testOwner grants grant bytes at a time and refuses past limit.
type testOwner struct {
	charged, limit, grant int64
	calls                 int
}

func (o *testOwner) ViewFor(*ViewSet, *LTable) *LTable { return nil }

func (o *testOwner) MemoryCharge(L *LState, n int64) (int64, bool) {
	o.calls++
	if o.charged+n > o.limit {
		return o.grant, false
	}
	o.charged += n
	return o.grant, true
}

func ownedState(limit int64) (*LState, *testOwner) {
	L := NewState()
	o := &testOwner{limit: limit, grant: 1}
	L.G.Views.Maker = o
	L.SetMemoryGrant(0)
	return L, o
}

// TestChargeTableChargesTheBoundState: a table grown by Go code charges
// the state bound to the goroutine, and nothing once it is unbound.
func TestChargeTableChargesTheBoundState(t *testing.T) {
	L, o := ownedState(1 << 40)
	defer L.Close()
	tb := L.NewTable()
	prev := Bind(L)
	for i := 1; i <= 10000; i++ {
		tb.RawSetInt(i, LNumber(i))
	}
	Unbind(prev)
	if o.charged < 10000*valueBytes {
		t.Fatalf("a 10,000-slot array part charged %d bytes", o.charged)
	}
	before := o.charged
	other := L.NewTable()
	for i := 1; i <= 10000; i++ {
		other.RawSetInt(i, LNumber(i))
	}
	if grew := o.charged - before; grew > tableBytes {
		t.Fatalf("unbound, a table's growth still charged %d bytes", grew)
	}
	if got := Measure(tb); got < 10000*valueBytes || got > 4*10000*valueBytes {
		t.Fatalf("Measure of a 10,000-number table: %d bytes", got)
	}
}

// TestRefusedChargeRaisesNotEnoughMemory: a refusal raises Lua 5.1's
// memory error, with no position, catchable by pcall; the state goes on.
func TestRefusedChargeRaisesNotEnoughMemory(t *testing.T) {
	L, _ := ownedState(1 << 20)
	defer L.Close()
	prev := Bind(L)
	defer Unbind(prev)
	err := L.DoString(`
local ok, e = pcall(string.rep, "x", 2^21)
assert(not ok and e == "not enough memory", tostring(e))
local ok2, e2 = pcall(function() local t = {} for i = 1, 1e7 do t[i] = i end end)
assert(not ok2 and e2 == "not enough memory", tostring(e2))
local ok3, e3 = pcall(function() local s = "y" for i = 1, 30 do s = s .. s end end)
assert(not ok3 and e3 == "not enough memory", tostring(e3))
x = ("z"):rep(10)`)
	if err != nil {
		t.Fatal(err)
	}
	if got := L.GetGlobal("x"); got != LString(strings.Repeat("z", 10)) {
		t.Fatalf("after the refusals: %v", got)
	}
}
