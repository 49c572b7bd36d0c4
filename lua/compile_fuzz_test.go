package lua

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/luarun/luarun/lua/parse"
)

// maxFuzzSource bounds a FuzzCompile input: compiling is linear-ish in
// the source, and the fuzzer's job is odd shapes, not big ones.
const maxFuzzSource = 16 << 10

// compileBound is how long FuzzCompile lets one input compile: far past
// what 16 KiB takes (milliseconds), so only a hang trips it, even on a
// loaded machine. The compiler does not look at the interrupt flag yet
// (issue 27 item 2): until it does, this bound stands for "no hang".
const compileBound = 20 * time.Second

// FuzzCompile: parsing and compiling any source gives a chunk or an
// error, never a Go panic (not even one the parser turns into an error:
// a runtime.Error) and never a hang. Its seeds are
// testdata/fuzz/FuzzCompile, run by go test as ordinary tests.
func FuzzCompile(f *testing.F) {
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > maxFuzzSource {
			return
		}
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			chunk, err := parse.Parse(strings.NewReader(src), "=fuzz")
			var re runtime.Error
			if errors.As(err, &re) {
				panic(err) // a Go failure in the parser, dressed as a syntax error
			}
			if err == nil {
				_, err = Compile(chunk, "=fuzz")
			}
			if err != nil && err.Error() == "" {
				panic("an empty error")
			}
		}()
		select {
		case r := <-done:
			if r != nil {
				t.Fatalf("compiling %q panicked: %v", src, r)
			}
		case <-time.After(compileBound):
			t.Fatalf("compiling %q did not finish in %v", src, compileBound)
		}
	})
}
