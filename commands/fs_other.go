//go:build !unix

package commands

// Elsewhere a path is opened as it is: there are no FIFOs to wait on.

const openNonblockFlags = 0

// processAlive cannot tell here: a temp file of another process is
// taken as in use (only the runs of this pid are swept).
func processAlive(pid int) bool { return true }
