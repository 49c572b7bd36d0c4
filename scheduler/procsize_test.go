package scheduler

// The scheduler's part of an idle process stays within its size class
// (issue 32: heap per idle process).

import (
	"testing"
	"unsafe"
)

// TestProcFits: a proc fits the 416-byte size class (it was 456 bytes,
// in the 480 class, while the hand-off slot was a whole Event).
func TestProcFits(t *testing.T) {
	if n := unsafe.Sizeof(proc{}); n > 416 {
		t.Fatalf("a proc is %d bytes: more than the 416-byte size class", n)
	}
}
