package lua

import (
	"fmt"
	"runtime"
	"testing"
)

// Setting then removing object keys: the path tnode.kill and findObj
// added to (a program without weak tables pays it).
func BenchmarkObjectKeySetRemove(b *testing.B) {
	objs := make([]LValue, 1000)
	for i := range objs {
		objs[i] = newLTable(0, 0)
	}
	tb := newLTable(0, 0)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		o := objs[n%len(objs)]
		tb.RawSet(o, LTrue)
		tb.RawSet(o, LNil)
	}
}

// SetMetatable with a metatable of 10 methods and no __mode.
func BenchmarkSetMetatableNoMode(b *testing.B) {
	L := NewState()
	defer L.Close()
	mt := L.NewTable()
	for i := range 10 {
		mt.RawSetString(fmt.Sprint("m", i), LTrue)
	}
	objs := make([]*LTable, 1000)
	for i := range objs {
		objs[i] = newLTable(0, 0)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		L.SetMetatable(objs[n%len(objs)], mt)
	}
}

// collectgarbage() with 10,000 weak entries (half of them dead) against
// the same heap without a weak table: the time the weak pass adds.
func BenchmarkCollectWeak10k(b *testing.B) {
	for _, weak := range []bool{false, true} {
		b.Run(fmt.Sprint("weak=", weak), func(b *testing.B) {
			L := NewState()
			defer L.Close()
			mode := "nil"
			if weak {
				mode = `{__mode = "k"}`
			}
			src := `local mt = ` + mode + `
function fill()
  keep, w = {}, setmetatable({}, mt)
  for i = 1, 10000 do local k = {} if i % 2 == 0 then keep[i] = k end w[k] = i end
end`
			if err := L.DoString(src); err != nil {
				b.Fatal(err)
			}
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				if err := L.DoString(`fill()`); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				b.StartTimer()
				if err := L.DoString(`collectgarbage()`); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
