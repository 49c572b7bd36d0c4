//go:build race

package luaproc

// raceEnabled: the test binary runs under the race detector (its shadow
// memory counts in RSS).
const raceEnabled = true
