package payload

// Fuzz targets for the two decoders that read what other parties send:
// JSON (json.decode, and HTTP bodies) and the wire form (messages
// between nodes). Their seed corpora are testdata/fuzz/<target>/, which
// go test runs as ordinary tests; go test -fuzz=FuzzDecodeJSON explores.
// json_test.go has two more: the JSON decoder and encoder against the
// encoding/json-based ones they replaced.

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeJSON: Decode accepts exactly what encoding/json accepts (one
// value, white space around it: json.Valid), and what it returns encodes
// and decodes back to itself. Where luarun's JSON legitimately differs
// from encoding/json it is in the values, not in what is accepted:
//   - numbers: an integer that fits int64 is an int64, anything else a
//     float64 (a big integer loses precision, as in Lua); one beyond
//     float64's range is ±Inf, as Lua's tonumber("1e400") (encoding/json
//     refuses it when decoding into a float64) — and Encode then refuses
//     it, as JSON has no spelling for it;
//   - a number written with a fraction or an exponent is a float64 even
//     when integral ("1E+2", "1.0"), and encodes back as an integer: the
//     same number to Lua (the round trip compares numbers as Lua does);
//   - it decodes anything encoding/json does, nested up to MaxJSONDepth
//     (encoding/json's bound: json.Valid refuses deeper texts too), but
//     Encode (as a message) refuses what is nested deeper than 200;
//   - invalid UTF-8 and lone surrogates in strings become U+FFFD, and a
//     repeated object key keeps its last value (as encoding/json).
func FuzzDecodeJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("Decode(%q): err %v, but json.Valid says %v", data, err, valid)
		}
		if err != nil {
			return
		}
		b, err := Encode(v)
		if err != nil {
			if strings.Contains(err.Error(), "Inf cannot be encoded") || strings.Contains(err.Error(), "nested deeper than") {
				return // a number beyond float64, or deeper than Encode goes (see above)
			}
			t.Fatalf("Decode(%q) = %#v, which does not encode: %v", data, v, err)
		}
		back, err := Decode(b)
		if err != nil || !reflect.DeepEqual(luaCanonical(back), luaCanonical(v)) {
			t.Fatalf("%q decodes to %#v, encodes as %q, which decodes to %#v (%v)", data, v, b, back, err)
		}
	})
}

// FuzzUnmarshalWire: any bytes give a value or an error, never a panic
// nor an allocation out of proportion to the input; a value read
// re-encodes to a form that reads back the same, with the same rest.
func FuzzUnmarshalWire(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		v, rest, err := UnmarshalWire(data)
		if err != nil {
			return
		}
		b, err := AppendWire(nil, v)
		if err != nil {
			t.Fatalf("UnmarshalWire(%q) = %#v, which does not encode: %v", data, v, err)
		}
		if len(b) > len(data)-len(rest) {
			t.Fatalf("UnmarshalWire(%q) = %#v: %d bytes read, %d written", data, v, len(data)-len(rest), len(b))
		}
		back, rest2, err := UnmarshalWire(append(b, rest...))
		if err != nil || string(rest2) != string(rest) || !reflect.DeepEqual(canonical(back), canonical(v)) {
			t.Fatalf("%q reads as %#v, writes as %q, which reads as %#v (%v)", data, v, b, back, err)
		}
	})
}

// luaCanonical is canonical with every number a float64, as Lua sees it.
func luaCanonical(v any) any {
	switch x := v.(type) {
	case int64:
		return canonical(float64(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = luaCanonical(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = luaCanonical(e)
		}
		return out
	}
	return canonical(v)
}

// floatBits stands for a float64 in canonical: NaN equals NaN there.
type floatBits uint64

// canonical is v with floats as their bits (compared exactly; every NaN
// alike), for reflect.DeepEqual.
func canonical(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return floatBits(0x7ff8000000000001)
		}
		return floatBits(math.Float64bits(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(x))
		for k, e := range x {
			out[canonical(k)] = canonical(e)
		}
		return out
	}
	return v
}
