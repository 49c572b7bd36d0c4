package lua

import (
	"fmt"
	"strings"
	"testing"
)

func TestTableNewLTable(t *testing.T) {
	tbl := newLTable(-1, -2)
	errorIfNotEqual(t, 0, cap(tbl.array))

	tbl = newLTable(10, 9)
	errorIfNotEqual(t, 10, cap(tbl.array))
}

func TestTableLen(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.RawSetInt(10, LNil)
	tbl.RawSetInt(9, LNumber(10))
	tbl.RawSetInt(8, LNil)
	tbl.RawSetInt(7, LNumber(10))
	errorIfNotEqual(t, 0, tbl.Len()) // luarun: 5.1's border (lua5.1 prints 0)

	tbl = newLTable(0, 0)
	tbl.Append(LTrue)
	tbl.Append(LTrue)
	tbl.Append(LTrue)
	errorIfNotEqual(t, 3, tbl.Len())
}

func TestTableLenType(t *testing.T) {
	L := NewState(Options{})
	err := L.DoString(`
        mt = {
            __index = mt,
            __len = function (self)
                return {hello = "world"}
            end
        }

        v = {}
        v.__index = v

        setmetatable(v, mt)

        assert(#v ~= 0, "#v should return a table reference in this case")

        print(#v)
    `)
	if err != nil {
		t.Error(err)
	}
}

func TestTableAppend(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.RawSetInt(1, LNumber(1))
	tbl.RawSetInt(2, LNumber(2))
	tbl.RawSetInt(3, LNumber(3))
	errorIfNotEqual(t, 3, tbl.Len())

	// luarun: the borders lua5.1 finds for the same assignments
	tbl.RawSetInt(1, LNil)
	tbl.RawSetInt(2, LNil)
	errorIfNotEqual(t, 0, tbl.Len())

	tbl.Append(LNumber(4))
	errorIfNotEqual(t, 1, tbl.Len())

	tbl.RawSetInt(3, LNil)
	tbl.RawSetInt(4, LNil)
	errorIfNotEqual(t, 1, tbl.Len())

	tbl.Append(LNumber(5))
	errorIfNotEqual(t, 2, tbl.Len())
}

func TestTableInsert(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.Append(LTrue)
	tbl.Append(LTrue)
	tbl.Append(LTrue)

	tbl.Insert(5, LFalse)
	errorIfNotEqual(t, LFalse, tbl.RawGetInt(5))
	errorIfNotEqual(t, 3, tbl.Len()) // luarun: lua5.1's border

	tbl.Insert(-10, LFalse) // 5.1 moves t[-9..4] up one
	errorIfNotEqual(t, LFalse, tbl.RawGet(LNumber(-10)))
	errorIfNotEqual(t, 5, tbl.Len())

	tbl = newLTable(0, 0)
	tbl.Append(LNumber(1))
	tbl.Append(LNumber(2))
	tbl.Append(LNumber(3))
	tbl.Insert(1, LNumber(10))
	errorIfNotEqual(t, LNumber(10), tbl.RawGetInt(1))
	errorIfNotEqual(t, LNumber(1), tbl.RawGetInt(2))
	errorIfNotEqual(t, LNumber(2), tbl.RawGetInt(3))
	errorIfNotEqual(t, LNumber(3), tbl.RawGetInt(4))
	errorIfNotEqual(t, 4, tbl.Len())

	tbl = newLTable(0, 0)
	tbl.Insert(5, LNumber(10))
	errorIfNotEqual(t, LNumber(10), tbl.RawGetInt(5))

}

func TestTableMaxN(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.Append(LTrue)
	tbl.Append(LTrue)
	tbl.Append(LTrue)
	errorIfNotEqual(t, 3, tbl.MaxN())

	tbl = newLTable(0, 0)
	errorIfNotEqual(t, 0, tbl.MaxN())

	tbl = newLTable(10, 0)
	errorIfNotEqual(t, 0, tbl.MaxN())
}

func TestTableRemove(t *testing.T) {
	tbl := newLTable(0, 0)
	errorIfNotEqual(t, LNil, tbl.Remove(10))
	tbl.Append(LTrue)
	errorIfNotEqual(t, LNil, tbl.Remove(10))

	tbl.Append(LFalse)
	tbl.Append(LTrue)
	errorIfNotEqual(t, LFalse, tbl.Remove(2))
	errorIfNotEqual(t, 2, tbl.MaxN())
	tbl.Append(LFalse)
	errorIfNotEqual(t, LFalse, tbl.Remove(-1))
	errorIfNotEqual(t, 2, tbl.MaxN())

}

func TestTableRawSetInt(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.RawSetInt(MaxArrayIndex+1, LTrue)
	errorIfNotEqual(t, MaxArrayIndex+1, tbl.MaxN()) // luarun: table.maxn counts every number key
	errorIfNotEqual(t, LTrue, tbl.RawGet(LNumber(MaxArrayIndex+1)))

	tbl.RawSetInt(1, LTrue)
	tbl.RawSetInt(3, LTrue)
	errorIfNotEqual(t, MaxArrayIndex+1, tbl.MaxN())
	errorIfNotEqual(t, LTrue, tbl.RawGetInt(1))
	errorIfNotEqual(t, LNil, tbl.RawGetInt(2))
	errorIfNotEqual(t, LTrue, tbl.RawGetInt(3))
	tbl.RawSetInt(2, LTrue)
	errorIfNotEqual(t, LTrue, tbl.RawGetInt(1))
	errorIfNotEqual(t, LTrue, tbl.RawGetInt(2))
	errorIfNotEqual(t, LTrue, tbl.RawGetInt(3))
}

func TestTableRawSetH(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.RawSetH(LString("key"), LTrue)
	tbl.RawSetH(LString("key"), LNil)
	errorIfNotEqual(t, LNil, tbl.RawGetH(LString("key")))

	tbl.RawSetH(LTrue, LTrue)
	tbl.RawSetH(LTrue, LNil)
	errorIfNotEqual(t, LNil, tbl.RawGetH(LTrue))
}

func TestTableRawGetH(t *testing.T) {
	tbl := newLTable(0, 0)
	errorIfNotEqual(t, LNil, tbl.RawGetH(LNumber(1)))
	errorIfNotEqual(t, LNil, tbl.RawGetH(LString("key0")))
	tbl.RawSetH(LString("key0"), LTrue)
	tbl.RawSetH(LString("key1"), LFalse)
	tbl.RawSetH(LNumber(1), LTrue)
	errorIfNotEqual(t, LTrue, tbl.RawGetH(LString("key0")))
	errorIfNotEqual(t, LTrue, tbl.RawGetH(LNumber(1)))
	errorIfNotEqual(t, LNil, tbl.RawGetH(LString("notexist")))
	errorIfNotEqual(t, LNil, tbl.RawGetH(LTrue))
}

func TestTableForEach(t *testing.T) {
	tbl := newLTable(0, 0)
	tbl.Append(LNumber(1))
	tbl.Append(LNumber(2))
	tbl.Append(LNumber(3))
	tbl.Append(LNil)
	tbl.Append(LNumber(5))

	tbl.RawSetH(LString("a"), LString("a"))
	tbl.RawSetH(LString("b"), LString("b"))
	tbl.RawSetH(LString("c"), LString("c"))

	tbl.RawSetH(LTrue, LString("true"))
	tbl.RawSetH(LFalse, LString("false"))

	tbl.ForEach(func(key, value LValue) {
		switch k := key.(type) {
		case LBool:
			switch bool(k) {
			case true:
				errorIfNotEqual(t, LString("true"), value)
			case false:
				errorIfNotEqual(t, LString("false"), value)
			default:
				t.Fail()
			}
		case LNumber:
			switch int(k) {
			case 1:
				errorIfNotEqual(t, LNumber(1), value)
			case 2:
				errorIfNotEqual(t, LNumber(2), value)
			case 3:
				errorIfNotEqual(t, LNumber(3), value)
			case 4:
				errorIfNotEqual(t, LNumber(5), value)
			default:
				t.Fail()
			}
		case LString:
			switch string(k) {
			case "a":
				errorIfNotEqual(t, LString("a"), value)
			case "b":
				errorIfNotEqual(t, LString("b"), value)
			case "c":
				errorIfNotEqual(t, LString("c"), value)
			default:
				t.Fail()
			}
		}
	})
}

// luarun: a table's keys other than 1..n live in its hash part, laid
// out as Lua 5.1's (table.go); table51_test.go compares what programs see
// with lua5.1. This checks the layout itself.

func TestTableHashPartAs51(t *testing.T) {
	tb := newLTable(0, 0)
	for i := range smallStrings {
		tb.RawSetString(fmt.Sprint(i), LNumber(i))
	}
	if len(tb.node) != smallStrings || len(tb.array) != 0 {
		t.Fatalf("%d keys: %d nodes, array %d", smallStrings, len(tb.node), len(tb.array))
	}
	// A deleted key keeps its node: a traversal that deletes goes on.
	tb.RawSetString("3", LNil)
	if i := tb.findStr("3"); i < 0 || tb.node[i].val != LNil {
		t.Fatal("a deleted key lost its node")
	}
	if k, _ := tb.Next(LString("3")); k == LNil {
		t.Fatal("next after a deleted key ended the traversal")
	}
	// The hash part is full: a new key rehashes it, dropping "3".
	tb.RawSetString("new", LTrue)
	if len(tb.node) != smallStrings || tb.findStr("3") >= 0 {
		t.Fatalf("after a rehash: %d nodes, \"3\" at %d", len(tb.node), tb.findStr("3"))
	}
	tb.RawSetString("ninth", LTrue)
	if len(tb.node) != 2*smallStrings {
		t.Fatalf("the ninth key: %d nodes", len(tb.node))
	}
	n := 0
	for k, _ := tb.Next(LNil); k != LNil; k, _ = tb.Next(k) {
		n++
	}
	if n != smallStrings+1 {
		t.Fatalf("%d keys after the move", n)
	}
	if tb.RawGetString("ninth") != LTrue || tb.RawGetString("7") != LNumber(7) || tb.RawGetString("3") != LNil {
		t.Fatal("values after the move")
	}
	// A traversal allocates only the first time (it boxes string keys once).
	small := newLTable(0, 4)
	small.RawSetString("a", LTrue)
	small.RawSetString("b", LTrue)
	walk := func() {
		for k, _ := small.Next(LNil); k != LNil; k, _ = small.Next(k) {
		}
	}
	walk()
	if n := testing.AllocsPerRun(100, walk); n != 0 {
		t.Fatalf("a traversal allocated %v times", n)
	}
	// Setting fields of a table with room allocates nothing.
	rec := newLTable(0, 3)
	set := func() {
		rec.RawSetString("x", LTrue)
		rec.RawSetString("y", LFalse)
		rec.RawSetString("z", LTrue)
	}
	if n := testing.AllocsPerRun(100, set); n != 0 {
		t.Fatalf("setting three fields allocated %v times", n)
	}
	// 5.1's string hash (luaS_hash), checked against hashes lua5.1 places keys by.
	if strHash("") != 0 || strHash("a") != 1^((1<<5)+(1>>2)+'a') {
		t.Fatal("strHash")
	}
}

// ForEach over a small table whose callback adds keys (moving them to
// the maps) walks what the table held when it began, without a panic.
func TestTableForEachAddingKeys(t *testing.T) {
	tb := newLTable(0, 0)
	for i := 0; i < smallStrings; i++ {
		tb.RawSetString(fmt.Sprint("k", i), LTrue)
	}
	n := 0
	tb.ForEach(func(k, v LValue) {
		if n++; n == 1 {
			tb.RawSetString("new", LTrue)
		}
	})
	if n != smallStrings {
		t.Fatalf("ForEach gave %d pairs, want %d", n, smallStrings)
	}
}

// TestBoxKey: a key boxed again from keyBoxes is the same LString, equal
// to a fresh box, and usable as a key of another table.
func TestBoxKey(t *testing.T) {
	k := string([]byte("type"))
	a := boxKey(k, strHash(k))
	b := boxKey(string([]byte("type")), strHash(k))
	if a != b || a != LValue(LString("type")) || b.(LString) != "type" {
		t.Fatalf("boxes %v %v", a, b)
	}
	tb := newLTable(0, 0)
	tb.RawSetString("type", LNumber(1))
	tb.RawSet(LString("type"), LNumber(2))
	if tb.RawGetString("type") != LNumber(2) || tb.RawGet(b) != LNumber(2) {
		t.Fatal("lookups")
	}
	long := strings.Repeat("k", maxBoxedKey+1)
	if boxKey(long, strHash(long)) != LValue(LString(long)) {
		t.Fatal("long key")
	}
}

// A record of up to 8 keys (http.serve's request table has 7) is made
// in one allocation, hash part included, and filling it allocates
// nothing more.
func TestRecordOfEightInOneAllocation(t *testing.T) {
	L := NewState()
	defer L.Close()
	keys := []string{"method", "path", "url", "query", "headers", "body", "remote", "eighth"}
	make8 := func() {
		tb := L.CreateTable(0, 8)
		for _, k := range keys {
			tb.RawSetString(k, LTrue)
		}
	}
	if n := testing.AllocsPerRun(100, make8); n != 1 {
		t.Fatalf("a record of 8 keys took %v allocations, want 1", n)
	}
	tb := L.CreateTable(0, 7)
	if len(tb.node) != 8 || memAccounting && tableCharge(0, 7) != tableBytes+8*nodeBytes {
		t.Fatalf("%d nodes, charged %d", len(tb.node), tableCharge(0, 7))
	}
}
