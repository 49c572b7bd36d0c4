//go:build race

package mpsc

const raceEnabled = true
