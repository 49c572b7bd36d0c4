package payload

// Benchmarks of the JSON decoder and encoder beside the encoding/json
// based ones they replaced (impl=std, jsonstd_test.go), on a few MB of
// each shape of text: objects, numbers, strings with escapes. Compare:
//
//	go test ./payload -run XXX -bench JSON -count 6 > /tmp/json.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl /tmp/json.txt

import (
	"fmt"
	"strings"
	"testing"
)

// benchJSONTexts are about 3 MB each.
func benchJSONTexts() []struct {
	name string
	text []byte
} {
	var objects, numbers, strs strings.Builder
	objects.WriteString("[")
	numbers.WriteString("[")
	strs.WriteString("[")
	for i := 0; objects.Len() < 3<<20; i++ {
		fmt.Fprintf(&objects, `{"id":%d,"name":"user %d","tags":["a","b"],"score":%d.5,"active":true,"parent":null},`, i, i, i%100)
	}
	for i := 0; numbers.Len() < 3<<20; i++ {
		fmt.Fprintf(&numbers, "%d,%d.25,-%de-3,", i*7919, i%1000, i)
	}
	for i := 0; strs.Len() < 3<<20; i++ {
		fmt.Fprintf(&strs, `"line %d:\t\"quoted\" caf\u00e9 \u4e2d\u6587 naïve \\path\n",`, i)
	}
	return []struct {
		name string
		text []byte
	}{
		{"objects", []byte(objects.String() + "{}]")},
		{"numbers", []byte(numbers.String() + "0]")},
		{"strings", []byte(strs.String() + `""]`)},
	}
}

func BenchmarkJSONDecode(b *testing.B) {
	for _, c := range benchJSONTexts() {
		for _, impl := range []struct {
			name   string
			decode func([]byte) (any, error)
		}{{"std", stdDecode}, {"new", Decode}} {
			b.Run("shape="+c.name+"/impl="+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				b.ReportAllocs()
				for range b.N {
					if _, err := impl.decode(c.text); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkJSONEncode(b *testing.B) {
	for _, c := range benchJSONTexts() {
		v, err := Decode(c.text)
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []struct {
			name   string
			encode func(any) ([]byte, error)
		}{{"std", stdEncode}, {"new", Encode}} {
			b.Run("shape="+c.name+"/impl="+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				b.ReportAllocs()
				for range b.N {
					if _, err := impl.encode(v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
