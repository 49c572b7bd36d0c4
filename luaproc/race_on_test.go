//go:build race

package luaproc

// raceEnabled: the test binary runs under the race detector (its memory
// counts in RSS, outside the Go heap's limit: TestSoak skips its RSS check).
const raceEnabled = true
