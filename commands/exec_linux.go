//go:build linux

package commands

// On Linux the child of exec.run also gets a parent-death signal: if
// luarun dies — even by SIGKILL, which runs no cleanup — the kernel sends
// the child SIGKILL. The signal is tied to the thread that started the
// child, not to the process, so the goroutine running the command keeps
// that thread (LockOSThread) until the child has been waited for: the Go
// runtime would otherwise be free to end the thread, killing the child.
// Only the child itself gets the signal; what it started in the
// background is not its process group's concern here, and lives on.

import (
	"runtime"
	"syscall"
)

func parentDeath(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// holdThread keeps the calling goroutine on its thread until the
// returned function is called.
func holdThread() (release func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
