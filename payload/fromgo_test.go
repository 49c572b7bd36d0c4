package payload

import (
	"encoding/json"
	"errors"
	"math"
	"net"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type pid uint64 // as scheduler.PID

type inner struct {
	Deep string `json:"deep"`
}

type Embedded struct {
	Promoted int
	Shadowed string
}

type record struct {
	ID       int               `json:"id"`
	Name     string            `json:"name,omitempty"`
	Empty    string            `json:"empty,omitempty"`
	Zero     time.Time         `json:"zero,omitzero"`
	Skip     string            `json:"-"`
	Dash     string            `json:"-,"`
	Plain    bool              // named by the field
	private  int               //nolint:unused // unexported: left out
	Ptr      *inner            `json:"ptr"`
	NilPtr   *inner            `json:"nil_ptr"`
	Any      any               `json:"any"`
	Tags     []string          `json:"tags"`
	Counts   map[string]uint16 `json:"counts"`
	Shadowed string            `json:"Shadowed"`
	Embedded
}

type textual struct{ s string }

func (t textual) MarshalText() ([]byte, error) { return []byte("text:" + t.s), nil }

type jsonish struct{}

func (*jsonish) MarshalJSON() ([]byte, error) { return []byte(`{"a":[1,2.5,null]}`), nil }

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no form") }

type named string
type bytesType []byte

// TestFromGo: each row of FromGo's table, Go → payload value.
func TestFromGo(t *testing.T) {
	when := time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.FixedZone("x", 3600))
	cases := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"nil pointer", (*int)(nil), nil},
		{"bool", true, true},
		{"int", 5, int64(5)},
		{"int8", int8(-8), int64(-8)},
		{"int32", int32(1 << 30), int64(1 << 30)},
		{"int64 at 2^53", int64(1 << 53), int64(1 << 53)},
		{"int64 exact beyond 2^53", int64(1 << 60), int64(1 << 60)},
		{"min int64", int64(math.MinInt64), int64(math.MinInt64)},
		{"uint8", uint8(200), int64(200)},
		{"uint64", uint64(1 << 40), int64(1 << 40)},
		{"uintptr", uintptr(9), int64(9)},
		{"PID kind", pid(1<<40 | 3), int64(1<<40 | 3)},
		{"duration", 1500 * time.Millisecond, int64(1_500_000_000)},
		{"float32", float32(0.5), 0.5},
		{"float64", 2.25, 2.25},
		{"NaN value", math.Inf(1), math.Inf(1)},
		{"string", "s", "s"},
		{"named string", named("n"), "n"},
		{"bytes", []byte("ab"), []byte("ab")},
		{"named bytes", bytesType("cd"), []byte("cd")},
		{"[]string", []string{"a", "b"}, []any{"a", "b"}},
		{"[]int", []int{1, 2}, []any{int64(1), int64(2)}},
		{"nil slice", []int(nil), []any{}},
		{"array", [2]uint8{1, 2}, []any{int64(1), int64(2)}},
		{"[]map", []map[string]any{{"id": 1}}, []any{map[string]any{"id": int64(1)}}},
		{"map[string]string", map[string]string{"k": "v"}, map[string]any{"k": "v"}},
		{"map named key", map[named]int{"k": 1}, map[string]any{"k": int64(1)}},
		{"nil map", map[string]int(nil), map[string]any{}},
		{"map[int]", map[int]string{1: "a", 3: "c"}, map[any]any{int64(1): "a", int64(3): "c"}},
		{"map[bool]", map[bool]int{true: 1}, map[any]any{true: int64(1)}},
		{"map[float]", map[float64]int{1.5: 1}, map[any]any{1.5: int64(1)}},
		{"map[any]any int key", map[any]any{1: "a", "k": []string{"x"}}, map[any]any{int64(1): "a", "k": []any{"x"}}},
		{"pointer", &inner{"d"}, map[string]any{"deep": "d"}},
		{"time", when, "2026-03-04T05:06:07.890123456+01:00"},
		{"time pointer", &when, "2026-03-04T05:06:07.890123456+01:00"},
		{"TextMarshaler", textual{"t"}, "text:t"},
		{"TextMarshaler net.IP", net.IPv4(10, 0, 0, 1), "10.0.0.1"},
		{"json.Marshaler", &jsonish{}, map[string]any{"a": []any{int64(1), 2.5, nil}}},
		{"nil json.Marshaler", (*jsonish)(nil), nil},
		{"json.RawMessage", json.RawMessage(`[true]`), []any{true}},
		{"error", errors.New("boom"), "boom"},
		{"Null", Null, Null},
		{"empty struct", struct{}{}, map[string]any{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FromGo(c.in)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
			require.NoError(t, Check(got), "FromGo's result is a payload value")
		})
	}
}

func TestFromGoStruct(t *testing.T) {
	r := record{
		ID: 7, Name: "n", Skip: "s", Dash: "d", Plain: true, private: 1,
		Ptr: &inner{"x"}, Any: []int{4}, Tags: []string{"t"}, Counts: map[string]uint16{"c": 2},
		Shadowed: "outer", Embedded: Embedded{Promoted: 9, Shadowed: "inner"},
	}
	got, err := FromGo(r)
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"id": int64(7), "name": "n", "-": "d", "Plain": true,
		"ptr": map[string]any{"deep": "x"}, "nil_ptr": nil, "any": []any{int64(4)},
		"tags": []any{"t"}, "counts": map[string]any{"c": int64(2)},
		"Shadowed": "outer", "Promoted": int64(9),
	}, got)

	// encoding/json gives the same fields
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var viaJSON map[string]any
	require.NoError(t, json.Unmarshal(b, &viaJSON))
	require.ElementsMatch(t, keys(viaJSON), keys(got.(map[string]any)))

	// a nil embedded pointer's fields are left out, as encoding/json does
	type withPtr struct {
		*Embedded
		A int
	}
	got, err = FromGo(withPtr{A: 1})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"A": int64(1)}, got)

	// two fields of one name at one depth, neither tagged: neither
	type E1 struct{ X int }
	type E2 struct{ X int }
	type tie struct {
		E1
		E2
	}
	got, err = FromGo(tie{E1{1}, E2{2}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{}, got)
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestFromGoUnchanged: payload values come back as they are, not copied.
func TestFromGoUnchanged(t *testing.T) {
	m := map[string]any{"a": []any{int64(1), "x"}, "b": map[any]any{int64(1): true}}
	got, err := FromGo(m)
	require.NoError(t, err)
	require.Equal(t, mapID(m), mapID(got))
	l := []any{int64(1), map[string]any{}}
	got, err = FromGo(l)
	require.NoError(t, err)
	require.Same(t, &l[0], &got.([]any)[0])

	args := []any{int64(1), "s"}
	ps, err := FromGoAll(args)
	require.NoError(t, err)
	require.Same(t, &args[0], &ps[0])

	// a container with something to convert is copied; the original stays
	m2 := map[string]any{"n": 1}
	got, err = FromGo(m2)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"n": int64(1)}, got)
	require.Equal(t, 1, m2["n"])

	ps, err = FromGoAll([]any{"a", []string{"b"}})
	require.NoError(t, err)
	require.Equal(t, Payloads{"a", []any{"b"}}, ps)
}

// TestFromGoRefusals: each value with no Lua form, and its error's text.
func TestFromGoRefusals(t *testing.T) {
	cyc := map[string]any{}
	cyc["self"] = cyc
	lst := []any{nil}
	lst[0] = lst
	type node struct{ Next *node }
	loop := &node{}
	loop.Next = loop
	deep := any("x")
	for range maxDepth + 2 {
		deep = []any{deep}
	}
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"chan", make(chan int), "value: chan int cannot be sent"},
		{"func", func() {}, "value: func() cannot be sent"},
		{"nested func", map[string]any{"items": []any{1, 2, map[string]any{"cb": func() {}}}}, "value.items[3].cb: func() cannot be sent"},
		{"complex", complex(1, 2), "value: complex128 cannot be sent"},
		{"complex64 in struct", struct{ C complex64 }{}, "value.C: complex64 cannot be sent"},
		{"unsafe.Pointer", unsafe.Pointer(nil), "value: unsafe.Pointer cannot be sent"},
		{"cycle map", cyc, "value.self: cycle"},
		{"cycle list", lst, "value[1]: cycle"},
		{"cycle pointer", loop, "value.Next: cycle"},
		{"too deep", deep, "nested deeper than 200"},
		{"int beyond 2^53", int64(1<<53 + 1), "value: integer 9007199254740993 cannot be sent: a Lua number would round it (integers are exact to 2^53)"},
		{"int beyond 2^53 nested", map[string]any{"n": []int{1<<53 + 1}}, "value.n[1]: integer 9007199254740993 cannot be sent"},
		{"uint64 beyond int64", uint64(math.MaxUint64), "value: integer 18446744073709551615 cannot be sent: it is beyond int64"},
		{"struct key", map[inner]int{{}: 1}, "value: a key of type payload.inner cannot be sent"},
		{"pointer key", map[*int]int{new(int): 1}, "value: a key of type *int cannot be sent"},
		{"NaN key", map[float64]int{math.NaN(): 1}, "value: NaN cannot be a key"},
		{"nil key", map[any]any{nil: 1}, "value: a nil key cannot be sent"},
		{"keys that meet", map[any]any{1: "a", int64(1): "b"}, "value: two keys are both the Lua key 1"},
		{",string option", struct {
			N int `json:"n,string"`
		}{}, `value: field N: the json option ",string" is not supported`},
		{"MarshalJSON fails", failing{}, "value: MarshalJSON: no form"},
		{"odd key path", map[string]any{"a b": make(chan int)}, `value["a b"]: chan int cannot be sent`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromGo(c.in)
			require.ErrorContains(t, err, c.want)
			var ve *ValueError
			require.ErrorAs(t, err, &ve)
		})
	}
	_, err := FromGoAll([]any{1, struct{ F func() }{}})
	require.EqualError(t, err, "arg2.F: func() cannot be sent")

	// the same refused struct type twice: each error its own path
	type bad struct {
		N int `json:",string"`
	}
	_, err = FromGo(map[string]any{"a": bad{}})
	require.EqualError(t, err, `value.a: field N: the json option ",string" is not supported`)
	_, err = FromGo([]any{bad{}})
	require.EqualError(t, err, `value[1]: field N: the json option ",string" is not supported`)
}
