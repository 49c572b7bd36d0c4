package lua

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func samePointer(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestConstantsShareTheKeysBytes: a string constant and the equal key of
// a shared table hold the same bytes, whichever was made first (a
// lookup then compares pointers, not bytes).
func TestConstantsShareTheKeysBytes(t *testing.T) {
	saved := internedCount.Load() // the package's other tests compile many constants
	internedCount.Store(0)
	defer internedCount.Store(saved)
	L := NewState()
	defer L.Close()
	key := func(s string) LString { return LString(string([]byte(s))) } // bytes of its own
	constOf := func(src, text string) string {
		fn, err := L.LoadString(src)
		require.NoError(t, err)
		for _, c := range fn.Proto.Constants {
			if s, ok := c.(LString); ok && string(s) == text {
				return string(s)
			}
		}
		t.Fatalf("no constant %q", text)
		return ""
	}
	// The table first, then the script.
	tb := L.NewTable()
	tb.RawSetString(string(key("internTestFirst")), LTrue)
	tb.Share()
	c := constOf(`return x.internTestFirst`, "internTestFirst")
	require.True(t, samePointer(c, string(tb.node[tb.findStrH("internTestFirst", strHash("internTestFirst"))].key.(LString))))
	// The script first, then the table.
	c = constOf(`return x.internTestSecond`, "internTestSecond")
	tb2 := L.NewTable()
	k := key("internTestSecond")
	require.False(t, samePointer(c, string(k)))
	tb2.RawSetString(string(k), LTrue)
	tb2.Share()
	got := tb2.node[tb2.findStrH("internTestSecond", strHash("internTestSecond"))].key.(LString)
	require.True(t, samePointer(c, string(got)))
	require.Equal(t, LTrue, tb2.RawGetString("internTestSecond"))
	// The string's own bytes still read as the key.
	require.Equal(t, LTrue, tb2.RawGetString(string(key("internTestSecond"))))
}

// TestInternIsBounded: constants past maxInterned are not kept (generated
// code compiled for ever must not grow the set), long texts never are,
// and a shared table's keys are until four times the bound.
func TestInternIsBounded(t *testing.T) {
	long := LString(fmt.Sprintf("%050d", 7))
	require.True(t, samePointer(string(internKey(long, false)), string(long)))
	saved := internedCount.Load()
	internedCount.Store(maxInterned)
	defer internedCount.Store(saved)
	fresh := LString("internTestPastTheBound")
	require.True(t, samePointer(string(internKey(fresh, false)), string(fresh)))
	_, kept := interned.Load(string(fresh))
	require.False(t, kept)
	key := LString("internTestSharedPastTheBound") // a shared table's key still is
	require.False(t, samePointer(string(internKey(key, true)), string(key)), "a copy")
	_, kept = interned.Load(string(key))
	require.True(t, kept)
	internedCount.Store(4 * maxInterned) // but not past four times the bound
	key = LString("internTestSharedPastFourTimes")
	require.True(t, samePointer(string(internKey(key, true)), string(key)))
	_, kept = interned.Load(string(key))
	require.False(t, kept)
}
