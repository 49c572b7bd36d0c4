package payload

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	good := map[string]any{
		"n": nil, "b": true, "i": int64(3), "f": 1.5, "s": "x\x00y", "raw": []byte{0, 1},
		"list":  []any{int64(1), "two", []any{}},
		"mixed": map[any]any{int64(1): "a", "k": false, 2.5: nil, true: int64(0)},
	}
	require.NoError(t, Check(good))

	cases := []struct {
		v    any
		want string
	}{
		{map[string]any{"items": []any{int64(1), int64(2), map[string]any{"cb": func() {}}}}, "value.items[3].cb: func() cannot be sent"},
		{[]any{int(1)}, "value[1]: int cannot be sent"},
		{map[string]any{"a b": struct{}{}}, `value["a b"]: struct {} cannot be sent`},
		{map[any]any{uint8(1): int64(1)}, "key of type uint8 cannot be sent"},
		{map[any]any{math.NaN(): int64(1)}, "NaN cannot be a key"},
	}
	for _, c := range cases {
		err := Check(c.v)
		require.Error(t, err)
		require.Contains(t, err.Error(), c.want)
	}

	cyc := map[string]any{}
	cyc["self"] = cyc
	require.ErrorContains(t, Check(cyc), "value.self: cycle")
	lst := []any{nil}
	lst[0] = lst
	require.ErrorContains(t, Check(lst), "value[1]: cycle")

	require.ErrorContains(t, CheckAll(Payloads{int64(1), uint8(2)}), "arg2: uint8 cannot be sent")
}

func TestJSONRoundTrip(t *testing.T) {
	v := map[string]any{
		"a":   []any{int64(1), 2.5, "x", nil, true, map[string]any{}},
		"big": int64(math.MaxInt64), "neg": int64(-7), "f": 1e300,
	}
	b, err := Encode(v)
	require.NoError(t, err)
	require.Equal(t, `{"a":[1,2.5,"x",null,true,{}],"big":9223372036854775807,"f":1e+300,"neg":-7}`, string(b))
	back, err := Decode(b)
	require.NoError(t, err)
	require.Equal(t, v, back)
}

func TestJSONEdges(t *testing.T) {
	b, err := Encode(map[any]any{int64(1): "a", true: "b"})
	require.NoError(t, err)
	require.Equal(t, `{"1":"a","true":"b"}`, string(b))
	b, err = Encode([]byte("hi"))
	require.NoError(t, err)
	require.Equal(t, `"hi"`, string(b))

	_, err = Encode(map[string]any{"x": []any{math.Inf(1)}})
	require.ErrorContains(t, err, "value.x[1]: +Inf cannot be encoded as JSON")
	_, err = Encode(map[string]any{"c": make(chan int)})
	require.ErrorContains(t, err, "value.c: chan int cannot be encoded")

	_, err = Decode([]byte(`{"a":`))
	require.ErrorContains(t, err, "decode JSON")
	_, err = Decode([]byte(`1 2`))
	require.ErrorContains(t, err, "data after the first value")
	v, err := Decode([]byte(`[1.0, 12345678901234567890]`))
	require.NoError(t, err)
	require.Equal(t, []any{1.0, 1.2345678901234567e19}, v)
}

// TestNullAndDecodePositions: Null is a Value and encodes as null; a
// decoding error names its line and column.
func TestNullAndDecodePositions(t *testing.T) {
	require.NoError(t, Check([]any{int64(1), Null}))
	b, err := Encode(map[string]any{"a": Null, "l": []any{Null}})
	require.NoError(t, err)
	require.Equal(t, `{"a":null,"l":[null]}`, string(b))
	for doc, where := range map[string]string{
		`{"a": 1,}`:         "at line 1, column 9",
		"{\n \"a\": tru\n}": "at line 2, column 10",
		`[1, 2`:             "at line 1, column 6",
		`{"a":1} {"b":2}`:   "data after the first value at line 1, column 9",
		`{"a":1}} junk`:     "data after the first value at line 1, column 8",
		"[1]\n ]":           "data after the first value at line 2, column 2",
		`[1]]`:              "data after the first value at line 1, column 4",
		`"x"}`:              "data after the first value at line 1, column 4",
	} {
		_, err := Decode([]byte(doc))
		require.Error(t, err, doc)
		require.Contains(t, err.Error(), where, doc)
	}
}

// TestEncodeRefusesCollidingKeys: keys that JSON would write as the
// same string (1 and "1", true and "true", 1.5 and "1.5") are refused,
// whatever the map's order, rather than written as a duplicate key.
func TestEncodeRefusesCollidingKeys(t *testing.T) {
	for _, m := range []map[any]any{
		{int64(1): int64(1), "1": int64(2)},
		{true: "a", "true": "b"},
		{1.5: "a", "1.5": "b", "x": "c"},
	} {
		_, err := Encode(map[string]any{"t": m})
		require.Error(t, err)
		require.Regexp(t, `^value\.t: keys \S+ and \S+ would both be written as the object key "`, err.Error())
	}
	_, err := Encode(map[any]any{int64(1): "a", "1": "b"})
	require.EqualError(t, err, `value: keys "1" and 1 would both be written as the object key "1"`)
	b, err := Encode(map[any]any{int64(1): "a", "2": "b", true: "c"})
	require.NoError(t, err)
	require.Equal(t, `{"1":"a","2":"b","true":"c"}`, string(b))
}

// TestDecodeKeepsNegativeZero: JSON -0 is Lua's -0 (tonumber("-0")), a
// float, so that -0 encodes and decodes back as itself (FuzzDecodeJSON
// found "-0.0" coming back as the integer 0).
func TestDecodeKeepsNegativeZero(t *testing.T) {
	for _, doc := range []string{"-0", "-0.0", "-0e3"} {
		v, err := Decode([]byte(doc))
		require.NoError(t, err)
		f, ok := v.(float64)
		require.True(t, ok && f == 0 && math.Signbit(f), "%s decodes to %#v", doc, v)
		b, err := Encode(v)
		require.NoError(t, err)
		back, err := Decode(b)
		require.NoError(t, err)
		require.Equal(t, v, back)
	}
	v, err := Decode([]byte("0"))
	require.NoError(t, err)
	require.Equal(t, int64(0), v)
}
