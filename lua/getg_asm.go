//go:build amd64 || arm64

package lua

// getg is the running goroutine's runtime g pointer (getg_*.s): a number
// no other live goroutine has (goroutine.go).
func getg() uintptr
