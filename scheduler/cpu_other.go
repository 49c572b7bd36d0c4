//go:build !unix

package scheduler

import "time"

// readProcessCPU cannot read the CPU time here: the watchdog counts wall
// time for MaxStep.
func readProcessCPU() (time.Duration, bool) { return 0, false }
