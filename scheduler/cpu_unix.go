//go:build unix

package scheduler

import (
	"syscall"
	"time"
)

// readProcessCPU reads the program's CPU time with getrusage.
func readProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
