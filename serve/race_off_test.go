//go:build !race

package serve_test

// raceEnabled: the race detector's allocations would count in
// TestServeHelloAllocs.
const raceEnabled = false
