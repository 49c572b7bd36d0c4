//go:build unix

package lua

import (
	"os"
	"syscall"
)

// waitStatus is ps's status as C's wait() writes it: the exit code in
// the second byte, or the number of the signal that ended the process.
func waitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return int(ws)
	}
	return ps.ExitCode() << 8
}
