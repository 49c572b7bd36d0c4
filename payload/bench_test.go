package payload

import "testing"

// Benchmark values: a small message as a Go program sends one, and an
// http.get result (three fields, four headers).
var (
	benchMessage = map[string]any{"op": "put", "key": "user:42", "n": int64(3), "tags": []any{"a", "b"}}
	benchResult  = map[string]any{
		"status": int64(200), "body": string(make([]byte, 1024)),
		"headers": map[string]any{
			"content-length": "1024",
			"content-type":   "application/octet-stream",
			"date":           "Sun, 22 Nov 2026 08:00:00 GMT",
			"x-served-by":    "cache-fra1",
		},
	}
)

// BenchmarkCheck: validating values that are payload values already (what
// Runtime.Send and Start pay for each message or argument).
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct {
		name string
		v    any
	}{{"scalar", int64(7)}, {"message", benchMessage}, {"result", benchResult}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := Check(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFromGo: FromGo on the same payload values as BenchmarkCheck
// (what Start and Send pay now: no copy, no allocation), and on values it
// converts: a []map[string]any, a struct through its json tags.
func BenchmarkFromGo(b *testing.B) {
	type row struct {
		ID   int      `json:"id"`
		Name string   `json:"name"`
		Tags []string `json:"tags,omitempty"`
	}
	for _, c := range []struct {
		name string
		v    any
	}{
		{"scalar", int64(7)}, {"message", benchMessage}, {"result", benchResult},
		{"rows", []map[string]any{{"id": 1, "name": "a"}, {"id": 2, "name": "b"}}},
		{"struct", row{ID: 1, Name: "a", Tags: []string{"x", "y"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := FromGo(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
