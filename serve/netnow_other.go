//go:build !unix

package serve

// Without Unix descriptors every read and write that the buffer cannot
// answer goes through its command (netnow_unix.go has the inline
// attempts).

import "syscall"

func rawConn(any) syscall.RawConn { return nil }

func (so *socket) writeNow(string) int { return 0 }

func (so *socket) readNow() {}
