//go:build unix

package luaproc

// The process's CPU time, for benchmarks that report CPU per operation
// (less dependent on a busy host's other load than wall time).

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this test binary used.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
