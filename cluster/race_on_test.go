//go:build race

package cluster

// raceEnabled: under -race every mpsc push may yield (mpsc/hook_race.go),
// so on one CPU a long stream crawls; the tests send fewer.
const raceEnabled = true
