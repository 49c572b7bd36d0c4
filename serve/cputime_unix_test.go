//go:build unix

package serve_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the test process has used
// so far; ok false if the system does not say.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
