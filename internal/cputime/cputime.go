// Package cputime reads the CPU time the program has used: the
// watchdog's clock for MaxStep, and the CPU-per-operation figures of the
// benchmarks (far less moved by a busy host's other load than wall time).
package cputime

import "time"

// Process is the CPU time (user and system, all threads) this program
// has used so far, and whether the system says.
func Process() (time.Duration, bool) { return read() }
