//go:build unix

package commands

// On Unix the child of exec.run leads a process group of its own, and a
// kill or timeout sends SIGKILL to the whole group: a shell script's
// children die with it instead of living on holding its output pipes.

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
}
