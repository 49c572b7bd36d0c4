//go:build !unix

package commands

// Elsewhere a kill or timeout kills the child only (exec.CommandContext's
// default); WaitDelay still bounds the wait for pipes its children hold.

import "os/exec"

func killGroup(*exec.Cmd) {}
