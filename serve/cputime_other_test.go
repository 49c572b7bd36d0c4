//go:build !unix

package serve_test

import "time"

// processCPU: not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
