//go:build !amd64 && !arm64

package lua

// getg is 0 where the goroutine cannot be told: nothing is bound, and a
// table's growth is not charged (goroutine.go).
func getg() uintptr { return 0 }
