//go:build unix

package serve

// Inline attempts: a read or write that the kernel can answer at once
// (data already received, room in the send buffer) is done on the
// process's worker with one non-blocking system call, instead of a
// command that hands it to a goroutine and parks the process. The
// descriptor is already non-blocking (Go's poller owns it); RawConn's
// callback returning true ends the attempt without waiting, so neither
// function can block the worker. What they cannot do (EAGAIN, a partial
// write, an error) is left for the command, which waits, honours the
// timeout and reports errors — an error here is never reported, so the
// command meets it again and words it as it always has.

import (
	"syscall"
	"unsafe"
)

// rawConn is the connection's descriptor access, nil when it has none
// (a connection that is not a socket of this system).
func rawConn(c any) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// writeNow writes what the send buffer takes of data at once and
// returns how many bytes that was. The caller holds writeMu.
func (so *socket) writeNow(data string) int {
	if so.raw == nil || len(data) == 0 {
		return 0
	}
	written := 0
	so.raw.Write(func(fd uintptr) bool {
		for written < len(data) {
			rest := data[written:]
			n, err := syscall.Write(int(fd), unsafe.Slice(unsafe.StringData(rest), len(rest)))
			if err != nil || n <= 0 {
				break
			}
			written += n
		}
		return true
	})
	return written
}

// readNow appends to the buffer what the socket has received, without
// waiting; it marks the end when the peer has closed. The caller holds
// readMu.
func (so *socket) readNow() {
	if so.raw == nil || so.eof {
		return
	}
	so.grow()
	so.raw.Read(func(fd uintptr) bool {
		free := so.buf[len(so.buf):cap(so.buf)]
		n, err := syscall.Read(int(fd), free)
		switch {
		case n > 0:
			so.buf = so.buf[:len(so.buf)+n]
		case n == 0 && err == nil:
			so.eof = true
		}
		return true
	})
}
