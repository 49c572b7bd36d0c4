//go:build unix && !linux

package commands

// Other Unix systems have no parent-death signal: a child of exec.run
// outlives a luarun killed by SIGKILL (an orderly exit or a signal that
// luarun handles still kills it, through its process's cancellation).

import "syscall"

func parentDeath(*syscall.SysProcAttr) {}

func holdThread() (release func()) { return func() {} }
