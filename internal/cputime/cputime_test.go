package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessCounts: where the system says, the CPU time grows with work
// done on this goroutine.
func TestProcessCounts(t *testing.T) {
	before, ok := Process()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
			t.Fatalf("no CPU time on %s", runtime.GOOS)
		}
		t.Skip("no CPU time here")
	}
	x := 0
	for {
		for i := 0; i < 1_000_000; i++ {
			x += i ^ x
		}
		if after, _ := Process(); after-before >= time.Millisecond {
			break
		}
	}
	_ = x
}
