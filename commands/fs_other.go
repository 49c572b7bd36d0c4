//go:build !unix

package commands

// Elsewhere a path is opened as it is: there are no FIFOs to wait on.

const openNonblockFlags = 0
