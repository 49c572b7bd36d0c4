//go:build !unix

package commands

// Elsewhere a kill or timeout kills the child only (exec.CommandContext's
// default); WaitDelay still bounds the wait for pipes its children hold,
// and background children may outlive the command. There is no
// parent-death signal: a child outlives a luarun that is killed outright.

import "os/exec"

func killGroup(*exec.Cmd) {}

func holdThread() (release func()) { return func() {} }

func endGroup(*exec.Cmd) {}
