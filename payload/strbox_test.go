package payload

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A string read from the wire is the bytes it was, of every length
// around the boxes' sizes, and stays so after the message's buffer is
// written over and the collector has run.
func TestWireStringsOfEveryLength(t *testing.T) {
	var got []any
	var want []string
	for n := range 100 {
		s := strings.Repeat("abcdefghij", 10)[:n]
		buf, err := AppendWire(nil, s)
		require.NoError(t, err)
		v, rest, err := UnmarshalWire(buf)
		require.NoError(t, err)
		require.Empty(t, rest)
		clear(buf)
		got, want = append(got, v), append(want, s)
	}
	runtime.GC()
	for i, v := range got {
		require.Equal(t, want[i], v, "length %d", i)
		require.Equal(t, want[i][:i/2], v.(string)[:i/2], "a substring")
	}
}

// A short string read from the wire is one allocation: its header and
// bytes together (string(b) as an interface was two).
func TestWireShortStringAllocs(t *testing.T) {
	buf, err := AppendWire(nil, "0123456789abcdef")
	require.NoError(t, err)
	for _, b := range [][]byte{buf, append(buf[:1:1], append([]byte{40}, strings.Repeat("x", 40)...)...)} {
		var v any
		allocs := testing.AllocsPerRun(100, func() { v, _, _ = UnmarshalWire(b) })
		require.Equal(t, 1.0, allocs, "%q", v)
	}
}
