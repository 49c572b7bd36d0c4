package scheduler

// The scheduler's part of an idle process stays within its size class
// (issue 32: heap per idle process).

import (
	"testing"
	"unsafe"
)

// TestProcFits: a proc fits the 352-byte size class (it was 456 bytes,
// in the 480 class, while the hand-off slot was a whole Event; 416, in
// the 416 class, while its context kept a copy of the PID and the
// Interrupter and its 4-byte fields were padded to 8; 376, in the 384
// class, while it had a Scheduler pointer, an int backlog and four
// atomic.Bools).
func TestProcFits(t *testing.T) {
	if n := unsafe.Sizeof(proc{}); n > 352 {
		t.Fatalf("a proc is %d bytes: more than the 352-byte size class", n)
	}
}
