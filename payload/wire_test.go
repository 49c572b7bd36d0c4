package payload

import (
	"math"
	"math/rand"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWireRoundTrip: every kind of payload value comes back as it went,
// with its Go type (an integral float stays a float, a map's number and
// boolean keys stay keys of their type, Null is not nil, bytes not text).
func TestWireRoundTrip(t *testing.T) {
	values := []any{
		nil, Null, true, false, int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
		0.0, 2.0, -0.5, math.Inf(1), math.NaN(), "", "héllo\x00", []byte{0, 255}, []byte{},
		[]any{}, []any{int64(1), "two", nil, Null, []any{3.5}},
		map[string]any{}, map[string]any{"a": int64(1), "": map[string]any{"b": []any{true}}},
		map[any]any{int64(1): "x", 2.5: false, true: Null, "s": map[any]any{}},
	}
	for _, v := range values {
		b, err := AppendWire([]byte{0xEE}, v)
		require.NoError(t, err, "%#v", v)
		require.Equal(t, byte(0xEE), b[0], "appends")
		got, rest, err := UnmarshalWire(append(b[1:], 7))
		require.NoError(t, err, "%#v", v)
		assert.Equal(t, []byte{7}, rest, "what follows is left")
		if f, ok := v.(float64); ok && math.IsNaN(f) {
			assert.True(t, math.IsNaN(got.(float64)))
			continue
		}
		assert.Equal(t, v, got)
	}
}

// TestWireRefuses: what Check refuses, the wire form refuses, naming the
// path.
func TestWireRefuses(t *testing.T) {
	_, err := AppendWire(nil, map[string]any{"f": []any{func() {}}})
	assert.ErrorContains(t, err, "f[1]: func() cannot be sent")
	_, err = AppendWire(nil, map[any]any{math.NaN(): 1})
	assert.ErrorContains(t, err, "NaN cannot be a key")
	deep := any(int64(1))
	for range maxDepth + 2 {
		deep = []any{deep}
	}
	_, err = AppendWire(nil, deep)
	assert.ErrorContains(t, err, "nested deeper")
}

// TestWireMalformed: every truncation of a valid form, and random bytes,
// give an error or a value — never a panic — and a count past the data
// is refused before anything is made for it.
func TestWireMalformed(t *testing.T) {
	b, err := AppendWire(nil, map[any]any{"k": []any{int64(300), 1.5, "str", map[string]any{"x": []byte("y")}}, int64(2): true})
	require.NoError(t, err)
	for i := range b {
		_, _, err := UnmarshalWire(b[:i])
		assert.Error(t, err, "truncated at %d", i)
	}
	rng := rand.New(rand.NewSource(1))
	for range 20000 {
		junk := make([]byte, rng.Intn(24))
		rng.Read(junk)
		if len(junk) > 0 {
			junk[0] %= tagAnyMap + 2
		}
		UnmarshalWire(junk) // must not panic
	}
	_, _, err = UnmarshalWire([]byte{tagList, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F})
	assert.ErrorIs(t, err, errShort)
	_, _, err = UnmarshalWire([]byte{tagAnyMap, 1, tagList, 0, tagNil})
	assert.ErrorContains(t, err, "cannot be sent")
}

// TestWireClaimedCountsCostLittle: a message of nested lists, each
// claiming as many elements as the bytes left, decodes to an error
// without allocating for the claims (a 10 KB message once made 31 MB).
func TestWireClaimedCountsCostLittle(t *testing.T) {
	var msg []byte
	for range 150 {
		msg = append(msg, tagList, 0xD0, 0x4E) // a count of 10,000: the bytes that follow
	}
	msg = append(msg, make([]byte, 10000)...)
	allocs := testing.AllocsPerRun(5, func() {
		_, _, err := UnmarshalWire(msg)
		assert.Error(t, err)
	})
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	UnmarshalWire(msg)
	runtime.ReadMemStats(&m)
	assert.Less(t, m.TotalAlloc-before, uint64(1<<20), "bytes allocated for a 10 KB message")
	assert.Less(t, allocs, 2000.0)
}
