package lua

import (
	"sort"
)

func OpenTable(L *LState) int {
	tabmod := L.RegisterModule(TabLibName, tableFuncs)
	L.Push(tabmod)
	return 1
}

var tableFuncs = map[string]LGFunction{
	"getn":     tableGetN,
	"concat":   tableConcat,
	"foreach":  tableForeach,
	"foreachi": tableForeachi,
	"insert":   tableInsert,
	"maxn":     tableMaxN,
	"remove":   tableRemove,
	"setn":     tableSetN,
	"sort":     tableSort,
}

// tableForeach is Lua 5.1's table.foreach(t, f) (luarun: gopher-lua has
// none): f(k, v) for every pair, in next's order, until f returns
// something other than nil, which is returned.
func tableForeach(L *LState) int {
	tbl := L.CheckTable(1)
	fn := L.CheckFunction(2)
	for k, v := tbl.Next(LNil); k != LNil; k, v = tbl.Next(k) {
		if foreachCall(L, fn, k, v) {
			return 1
		}
	}
	return 0
}

// foreachCall calls fn(k, v) for table.foreach(i) and reports whether it
// returned something other than nil, which it leaves on the stack.
func foreachCall(L *LState, fn *LFunction, k, v LValue) bool {
	L.Push(fn)
	L.Push(k)
	L.Push(v)
	L.Call(2, 1)
	if L.Get(-1) != LNil {
		return true
	}
	L.Pop(1)
	return false
}

// tableForeachi is Lua 5.1's table.foreachi(t, f): f(i, t[i]) (raw) for i
// from 1 to #t, taken once at the start, until f returns something other
// than nil, which is returned.
func tableForeachi(L *LState) int {
	tbl := L.CheckTable(1)
	fn := L.CheckFunction(2)
	n := tbl.Len()
	for i := 1; i <= n; i++ {
		if foreachCall(L, fn, LNumber(i), tbl.RawGetInt(i)) {
			return 1
		}
	}
	return 0
}

// tableSetN is Lua 5.1's table.setn, which only raises: a table's size
// is no longer kept apart from it.
func tableSetN(L *LState) int {
	L.CheckTable(1)
	L.RaiseError("'setn' is obsolete")
	return 0
}

func tableSort(L *LState) int {
	tbl := L.CheckTable(1)
	// luarun: t[1..#t], wherever the table keeps them
	sorter := &lValueArraySorter{L: L, Values: tbl.sortValues()}
	if L.Get(2) != LNil { // luarun: a nil comparator is '<', as in 5.1
		sorter.Fn = L.CheckFunction(2)
	}
	sort.Sort(sorter)
	tbl.sorted(sorter.Values)
	return 0
}

func tableGetN(L *LState) int {
	L.Push(LNumber(L.CheckTable(1).Len()))
	return 1
}

// tableMaxN is Lua 5.1's table.maxn: the largest positive number among
// all the keys, integer or not, 0 if none (luarun: gopher-lua's looked at
// the array part only, so {[24.5] = 3} and keys in the hash part gave 0).
func tableMaxN(L *LState) int {
	max := LNumber(0)
	L.CheckTable(1).ForEach(func(k, _ LValue) {
		if n, ok := k.(LNumber); ok && n > max {
			max = n
		}
	})
	L.Push(max)
	return 1
}

// tableRemove is 5.1's tremove: a position outside 1..#t removes and
// returns nothing.
func tableRemove(L *LState) int {
	tbl := L.CheckTable(1)
	e := tbl.Len()
	pos := L.OptCInt(2, e)
	if pos < 1 || pos > e {
		return 0
	}
	L.Push(tbl.Remove(pos))
	return 1
}

func tableConcat(L *LState) int {
	tbl := L.CheckTable(1)
	sep := LString(L.OptString(2, ""))
	i := L.OptInt(3, 1)
	j := L.OptInt(4, tbl.Len())
	if L.GetTop() == 3 {
		if i > tbl.Len() || i < 1 {
			L.Push(emptyLString)
			return 1
		}
	}
	i = intMax(intMin(i, tbl.Len()), 1)
	j = intMin(intMin(j, tbl.Len()), tbl.Len())
	if i > j {
		L.Push(emptyLString)
		return 1
	}
	//TODO should flushing?
	retbottom := L.GetTop()
	for ; i <= j; i++ {
		L.Tick() // luarun: interruptible (interrupt.go)
		v := tbl.RawGetInt(i)
		if !LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type().String(), i)
		}
		L.Push(v)
		if i != j {
			L.Push(sep)
		}
	}
	L.Push(stringConcat(L, L.GetTop()-retbottom, L.reg.Top()-1))
	return 1
}

func tableInsert(L *LState) int {
	tbl := L.CheckTable(1)
	nargs := L.GetTop()
	if nargs == 1 {
		L.RaiseError("wrong number of arguments")
	}

	if L.GetTop() == 2 {
		tbl.Append(L.Get(2))
		return 0
	}
	tbl.Insert(L.CheckCInt(2), L.CheckAny(3))
	return 0
}

//
