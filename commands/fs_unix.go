//go:build unix

package commands

// On Unix fs.read and fs.list open their path with O_NONBLOCK, so that
// opening a FIFO does not wait for a writer (the fstat that follows
// refuses it), and with O_NOCTTY, so that opening a terminal never makes
// it the controlling one. Neither changes how a regular file or a
// directory reads.

import "syscall"

const openNonblockFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
