//go:build !unix

package luaproc

// processCPU has no source here: benchmarks report no CPU per operation.

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
