//go:build race

package tests

// raceFlags: under go test -race the binary under test is built with the
// race detector too, so the end-to-end runs check the real program.
var raceFlags = []string{"-race"}
