//go:build unix

package procgroup

import (
	"os"
	"syscall"
)

// Attr makes a command started with it lead a new process group.
func Attr(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid = true
	return attr
}

// Kill sends SIGKILL to p's process group (p leads it: Attr), or to p
// alone if that fails. Its error is nil, or the group's already gone.
func Kill(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err == nil {
		return nil
	}
	return p.Kill()
}
