package scheduler

// The process's CPU time, the watchdog's clock for MaxStep (watchdog.go).

// processCPU is the CPU time the program has used (user and system, all
// threads), and whether it could be read. A variable for the tests.
var processCPU = readProcessCPU
