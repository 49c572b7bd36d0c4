package lua

// Memory accounting's hooks (memory.go, measure.go) with an
// owner of the test's: what it is charged, when it refuses.

import (
	"fmt"
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

// TestTableGrowthChargesItsState: a table's growth charges the state
// that made it, whichever goroutine grows it and whatever state runs
// there: none is bound to a goroutine (luarun once charged the state
// bound to the running goroutine, and nothing on any other).
func TestTableGrowthChargesItsState(t *testing.T) {
	L, o := ownedState(1 << 40)
	defer L.Close()
	L2, o2 := ownedState(1 << 40)
	defer L2.Close()
	tb, tb2 := L.NewTable(), L2.NewTable()
	base, base2 := o.charged, o2.charged
	done := make(chan struct{})
	go func() { // a goroutine that runs neither state
		defer close(done)
		for i := 1; i <= 10000; i++ {
			tb.RawSetInt(i, LNumber(i))
			tb2.RawSetString(fmt.Sprint("k", i), LNumber(i))
		}
	}()
	<-done
	if grew := o.charged - base; grew < 10000*valueBytes {
		t.Fatalf("a 10,000-slot array part charged its state %d bytes", grew)
	}
	if grew := o2.charged - base2; grew < 10000*int64(nodeBytes) {
		t.Fatalf("a 10,000-key hash part charged its state %d bytes", grew)
	}
	if grew := o.charged - base; grew > 4*10000*valueBytes {
		t.Fatalf("the state was charged %d bytes: another state's table among them", grew)
	}
	if got := Measure(tb); got < 10000*valueBytes || got > 4*10000*valueBytes {
		t.Fatalf("Measure of a 10,000-number table: %d bytes", got)
	}
}

// TestViewGrowthChargesItsState: a state's copy-on-write view of a shared
// table, and the ordinary table it becomes, charge that state.
func TestViewGrowthChargesItsState(t *testing.T) {
	shared := newLTable(0, 0)
	shared.RawSetString("x", LNumber(1))
	shared.Share()
	L, o := ownedState(1 << 40)
	defer L.Close()
	view := L.G.Views.View(shared)
	before := o.charged
	for i := 1; i <= 1000; i++ {
		view.RawSetString(fmt.Sprint("k", i), LNumber(i))
	}
	if grew := o.charged - before; grew < 1000*int64(nodeBytes) {
		t.Fatalf("a view's 1,000 keys charged %d bytes", grew)
	}
	view.RawSetString("k1", LNil) // materializes
	if view.Base() != nil {
		t.Fatal("the view did not materialize")
	}
	before = o.charged
	for i := 1; i <= 1000; i++ {
		view.RawSetInt(i, LTrue)
	}
	if grew := o.charged - before; grew < 1000*valueBytes {
		t.Fatalf("a materialized view's 1,000 slots charged %d bytes", grew)
	}
	if bare := newLTable(0, 0); bare.home != nil {
		t.Fatal("a table of no state has a home")
	}
}

// TestRefusedChargeRaisesNotEnoughMemory: a refusal raises Lua 5.1's
// memory error, with no position, catchable by pcall; the state goes on.
func TestRefusedChargeRaisesNotEnoughMemory(t *testing.T) {
	L, _ := ownedState(1 << 20)
	defer L.Close()
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
