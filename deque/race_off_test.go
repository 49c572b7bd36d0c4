//go:build !race

package deque

const raceEnabled = false
