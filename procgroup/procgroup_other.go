//go:build !unix

package procgroup

import (
	"os"
	"syscall"
)

// Attr leaves attr as it is: there are no process groups here.
func Attr(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// Kill kills p alone.
func Kill(p *os.Process) error { return p.Kill() }
