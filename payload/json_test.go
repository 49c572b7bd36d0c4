package payload

// Tests of the JSON decoder and encoder: their errors, their depth bound,
// their stop hook, and (fuzz targets, whose seeds run as tests) that they
// give what the encoding/json-based ones they replaced gave
// (jsonstd_test.go).

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeErrors: each error says what was expected and where.
func TestDecodeErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"":                  "no value: the text is empty at line 1, column 1 (byte 1)",
		" \n":               "no value: the text is empty at line 2, column 1 (byte 3)",
		"{":                 "unexpected end of JSON input looking for beginning of object key string at line 1, column 2 (byte 2)",
		"[1,":               "unexpected end of JSON input looking for beginning of value at line 1, column 4 (byte 4)",
		"[1":                "unexpected end of JSON input after array element at line 1, column 3 (byte 3)",
		`{"a":1`:            "unexpected end of JSON input after object key:value pair at line 1, column 7 (byte 7)",
		`{"a"`:              "unexpected end of JSON input after object key at line 1, column 5 (byte 5)",
		`"abc`:              "unexpected end of JSON input in string literal at line 1, column 5 (byte 5)",
		`"\`:                "unexpected end of JSON input in string escape code at line 1, column 3 (byte 3)",
		`"\u12`:             `unexpected end of JSON input in \u hexadecimal character escape at line 1, column 6 (byte 6)`,
		"-":                 "unexpected end of JSON input in numeric literal at line 1, column 2 (byte 2)",
		"1.":                "unexpected end of JSON input after decimal point in numeric literal at line 1, column 3 (byte 3)",
		"1e+":               "unexpected end of JSON input in exponent of numeric literal at line 1, column 4 (byte 4)",
		"tru":               "unexpected end of JSON input in literal true at line 1, column 4 (byte 4)",
		"[1 2]":             "invalid character '2' after array element at line 1, column 4 (byte 4)",
		`{"a" 1}`:           "invalid character '1' after object key at line 1, column 6 (byte 6)",
		`{"a":1 "b"}`:       `invalid character '"' after object key:value pair at line 1, column 8 (byte 8)`,
		"{oops":             "invalid character 'o' looking for beginning of object key string at line 1, column 2 (byte 2)",
		"[1,]":              "invalid character ']' looking for beginning of value at line 1, column 4 (byte 4)",
		"\"a\x01\"":         `invalid character '\x01' in string literal at line 1, column 3 (byte 3)`,
		`"\x"`:              "invalid character 'x' in string escape code at line 1, column 3 (byte 3)",
		`"\u12g4"`:          `invalid character 'g' in \u hexadecimal character escape at line 1, column 6 (byte 6)`,
		"-a":                "invalid character 'a' in numeric literal at line 1, column 2 (byte 2)",
		"1.e3":              "invalid character 'e' after decimal point in numeric literal at line 1, column 3 (byte 3)",
		"1e+x":              "invalid character 'x' in exponent of numeric literal at line 1, column 4 (byte 4)",
		"nulx":              "invalid character 'x' in literal null (expecting 'l') at line 1, column 4 (byte 4)",
		"[fx]":              "invalid character 'x' in literal false (expecting 'a') at line 1, column 3 (byte 3)",
		"\xff":              `invalid character '\xff' looking for beginning of value at line 1, column 1 (byte 1)`,
		"'a'":               `invalid character '\'' looking for beginning of value at line 1, column 1 (byte 1)`,
		"01":                "data after the first value at line 1, column 2 (byte 2)",
		"[01]":              "invalid character '1' after array element at line 1, column 3 (byte 3)",
		"[1]\n ]":           "data after the first value at line 2, column 2 (byte 6)",
		"{\n \"a\": tru\n}": "invalid character '\\n' in literal true (expecting 'e') at line 2, column 10 (byte 12)",
	} {
		_, err := Decode([]byte(doc))
		require.EqualError(t, err, "decode JSON: "+want, "%q", doc)
	}
}

// TestDecodeDepth: arrays and objects nest up to MaxJSONDepth deep (as
// encoding/json); deeper is refused, at the bracket past the bound, and
// a hostile text (10 MB of '[') is refused as soon as it passes it.
func TestDecodeDepth(t *testing.T) {
	deep := func(n int, open, close string) []byte {
		return []byte(strings.Repeat(open, n) + "1" + strings.Repeat(close, n))
	}
	v, err := Decode(deep(MaxJSONDepth, "[", "]"))
	require.NoError(t, err)
	for range MaxJSONDepth {
		v = v.([]any)[0]
	}
	require.Equal(t, int64(1), v)
	_, err = Decode(deep(MaxJSONDepth, `{"k":`, "}"))
	require.NoError(t, err)

	want := fmt.Sprintf("decode JSON: arrays and objects nested deeper than %d at line 1, column %d (byte %[2]d)", MaxJSONDepth, MaxJSONDepth+1)
	_, err = Decode(deep(MaxJSONDepth+1, "[", "]"))
	require.EqualError(t, err, want)
	_, err = Decode(bytes.Repeat([]byte("["), 10<<20))
	require.EqualError(t, err, want)
	_, err = Decode([]byte(strings.Repeat(`{"a":[`, MaxJSONDepth)))
	require.ErrorContains(t, err, "nested deeper than")
}

// stopAfter is a stop hook that counts its calls and returns errStop
// from the n-th on (never, for n 0).
func stopAfter(n int) (stop func() error, calls *int) {
	calls = new(int)
	return func() error {
		*calls++
		if n > 0 && *calls >= n {
			return errStop
		}
		return nil
	}, calls
}

var errStop = errors.New("stopped")

// bigJSON are texts of each shape a decoder spends its time on, about
// 4 MB each.
func bigJSON() map[string][]byte {
	const n = 4 << 20
	keys := new(strings.Builder)
	keys.WriteString("{")
	for i := 0; keys.Len() < n; i++ {
		fmt.Fprintf(keys, `"key%d":%d,`, i, i)
	}
	keys.WriteString(`"end":0}`)
	return map[string][]byte{
		"values":  []byte("[" + strings.Repeat(`{"a":1,"b":"text","c":[1.5,2e3,null]},`, n/40) + "0]"),
		"string":  []byte(`"` + strings.Repeat("x", n) + `"`),
		"escapes": []byte(`"` + strings.Repeat(`\n\u00e9é`, n/10) + `"`),
		"space":   []byte("[" + strings.Repeat(" ", n) + "1]"),
		"keys":    []byte(keys.String()),
	}
}

// TestDecodeStopStops: the stop hook is called often (at least every
// 512 KB of text, whatever its shape: a string, white space, the members
// of one object), and its error ends the decoding, as it is.
func TestDecodeStopStops(t *testing.T) {
	for name, doc := range bigJSON() {
		stop, calls := stopAfter(0)
		_, err := DecodeStop(doc, stop)
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, *calls, len(doc)/(512<<10), "%s: %d calls for %d bytes", name, *calls, len(doc))

		stop, calls = stopAfter(3)
		v, err := DecodeStop(doc, stop)
		require.ErrorIs(t, err, errStop, name)
		require.Nil(t, v)
		require.Equal(t, 3, *calls, name)
	}
}

// TestEncodeStopStops: as TestDecodeStopStops for Encode, with values of
// each shape (a sort of many keys is stopped too).
func TestEncodeStopStops(t *testing.T) {
	for name, doc := range bigJSON() {
		if name == "space" {
			continue // [1]
		}
		v, err := Decode(doc)
		require.NoError(t, err)
		stop, calls := stopAfter(0)
		b, err := EncodeStop(v, stop)
		require.NoError(t, err, name)
		require.GreaterOrEqual(t, *calls, len(b)/(512<<10), "%s: %d calls for %d bytes", name, *calls, len(b))

		stop, calls = stopAfter(3)
		b, err = EncodeStop(v, stop)
		require.ErrorIs(t, err, errStop, name)
		require.Nil(t, b)
		require.Equal(t, 3, *calls, name)
	}
	many := make(map[any]any, 100000)
	for i := range 100000 {
		many[int64(i)] = true
	}
	stop, calls := stopAfter(2)
	_, err := EncodeStop(many, stop)
	require.ErrorIs(t, err, errStop)
	require.Equal(t, 2, *calls)
}

// TestEncodeLikeEncodingJSON: strings and floats are written as
// encoding/json writes them.
func TestEncodeLikeEncodingJSON(t *testing.T) {
	for _, v := range []any{
		"<a href='x'>&amp;</a>", "\u2028\u2029", "bad \xff\xfe utf-8", "\x00\x01\x1f\x7f\b\f\n\r\t\"\\/",
		"é中😀", 1e21, 1e20, 1e-6, 1e-7, -1.5e-300, 0.1, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		map[any]any{true: 1.5, "<": []byte("\xff"), 2.5: "x"},
	} {
		want, err := stdEncode(v)
		require.NoError(t, err)
		got, err := Encode(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%#v", v)
	}
}

// positionRE finds the position an error names.
var positionRE = regexp.MustCompile(` at line \d+, column \d+ \(byte \d+\)$`)

// FuzzDecodeJSONLikeEncodingJSON: Decode gives what the encoding/json
// based decoder it replaced gave: the same values, or an error at the
// same position.
func FuzzDecodeJSONLikeEncodingJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := stdDecode(data)
		got, err := Decode(data)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Decode(%q): %v, but encoding/json says %v", data, err, wantErr)
		}
		if err != nil {
			if a, b := positionRE.FindString(err.Error()), positionRE.FindString(wantErr.Error()); a != b {
				t.Fatalf("Decode(%q): %v, but encoding/json says %v", data, err, wantErr)
			}
			return
		}
		if !reflect.DeepEqual(canonical(got), canonical(want)) {
			t.Fatalf("Decode(%q) = %#v, encoding/json's %#v", data, got, want)
		}
	})
}

// FuzzEncodeJSONLikeEncodingJSON: Encode writes what the encoding/json
// based encoder it replaced wrote, byte for byte (or the same error),
// for the values a text decodes to and for its bytes as a string.
func FuzzEncodeJSONLikeEncodingJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		values := []any{string(data), data}
		if v, err := stdDecode(data); err == nil {
			values = append(values, v)
		}
		for _, v := range values {
			want, wantErr := stdEncode(v)
			got, err := Encode(v)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
				t.Fatalf("Encode(%#v) = %q, %v; encoding/json's %q, %v", v, got, err, want, wantErr)
			}
		}
	})
}

// jsonSeeds are the seeds of the fuzz targets above.
var jsonSeeds = []string{
	``, ` `, `null`, `true`, `false`, `0`, `-0`, `-0.0`, `1`, `-1`, `1.5`, `1e400`, `-1e400`, `1e-400`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
	`123456789012345678`, `1234567890123456789`, `1E+2`, `1.0`, `0.1e-7`, `1e21`,
	`""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`,
	`"\ud83d\ud83d\ude00"`, `"\ud83dx"`, `"\ud83d\u12g4"`, "\"\xff\xfe\"", "\"\xe4\xb8\"", `"é中😀"`, `"<&>"`, "\"\u2028\"",
	`[]`, `{}`, `[1,[2,[3]],{"a":{"b":[]}}]`, `{"a":1,"a":2}`, `{"":null}`, ` [ 1 , 2 ] `, "\t\r\n{}\n",
	`[1,]`, `{"a":1,}`, `[1]]`, `{"a":1}} junk`, `01`, `[01]`, `1.`, `.5`, `+1`, `1e`, `-`, `tru`, `nul`, `[`, `{"a"`,
	"\"\x01\"", `"\x"`, `'a'`, `NaN`, `Infinity`, "\xef\xbb\xbf1",
}
