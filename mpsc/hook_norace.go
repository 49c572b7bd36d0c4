//go:build !race

package mpsc

// raceWindow is a no-op outside -race builds (see hook_race.go).
func raceWindow() {}
