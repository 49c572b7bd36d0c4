package luaproc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// machineMemory is the machine's memory in bytes, or the cgroup's
// (v2 memory.max, v1 memory.limit_in_bytes) limit when lower; 0 when
// unknown.
func machineMemory() int64 {
	var si syscall.Sysinfo_t
	total := int64(0)
	if syscall.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}
