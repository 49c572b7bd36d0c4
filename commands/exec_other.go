//go:build !unix

package commands

// Elsewhere a kill or timeout kills the child only (exec.CommandContext's
// default); WaitDelay still bounds the wait for pipes its children hold,
// and background children may outlive the command.

import "os/exec"

func killGroup(*exec.Cmd) {}

func endGroup(*exec.Cmd) {}
