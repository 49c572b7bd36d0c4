//go:build !unix

package lua

import "os"

// waitStatus is ps's status as C's system() answers it: the exit code.
func waitStatus(ps *os.ProcessState) int {
	return ps.ExitCode()
}
