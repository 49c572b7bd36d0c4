package scheduler

// The process's CPU time, the watchdog's clock for MaxStep (watchdog.go).

import "github.com/luarun/luarun/internal/cputime"

// processCPU is the CPU time the program has used (user and system, all
// threads), and whether it could be read (where not, the watchdog
// counts wall time). A variable for the tests.
var processCPU = cputime.Process
