//go:build unix

package commands

// On Unix fs.read and fs.list open their path with O_NONBLOCK, so that
// opening a FIFO does not wait for a writer (the fstat that follows
// refuses it), and with O_NOCTTY, so that opening a terminal never makes
// it the controlling one. Neither changes how a regular file or a
// directory reads.

import "syscall"

const openNonblockFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// processAlive reports whether a process with this pid exists (signal 0:
// ESRCH when none; EPERM means one exists that is not ours).
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}
