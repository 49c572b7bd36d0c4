//go:build !race

package deque

// raceWindow is a no-op outside -race builds (see hook_race.go).
func raceWindow() {}
