//go:build !linux

package luaproc

// machineMemory is 0 where it is not read: the runtime has no default
// bound (Options.MaxMemory sets one).
func machineMemory() int64 { return 0 }
