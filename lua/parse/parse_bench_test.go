package parse

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseManyFunctions parses (only) a module of 10,000 functions
// with parameters, locals, loops and closures: what following 5.1's
// scopes (scope.go) costs the parser (go test ./lua/parse -bench .).
func BenchmarkParseManyFunctions(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("local M = {}\nlocal helper, scale = 1, 2\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, `function M.f%d(a, b, ...)
  local x, y = a + helper, b * scale
  for i = 1, 3 do x = x + i end
  for k, v in pairs(M) do y = y + #k end
  return function() return x + y + a + helper end
end
`, i)
	}
	sb.WriteString("return M\n")
	src := sb.String()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(strings.NewReader(src), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
