//go:build unix

package commands

// On Unix the child of exec.run leads a process group of its own, and a
// kill or timeout sends SIGKILL to the whole group: a shell script's
// children die with it instead of living on holding its output pipes.
// Once the child has been waited for, whatever is left of its group (the
// children it put in the background) is killed too.

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}

// endGroup kills what is left of the group of cmd's child, which has been
// waited for (ESRCH, an empty group, is the usual answer). A group's id
// stays taken while it has members, so this cannot hit another group
// unless the pids wrapped around in between.
func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
