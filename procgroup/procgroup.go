// Package procgroup keeps the process groups of the commands luarun's
// scripts start (os.execute, io.popen, exec.run), so that a kill of the
// Lua process that started one, and luarun's exit, end the command and
// everything it started (a shell's children, a pipeline, `cmd &`).
//
// On Unix each such command leads a process group of its own (Attr);
// Started records it and Ended forgets it once the command has been
// waited for. KillAll sends SIGKILL to every recorded group: luarun calls
// it on its way out, whatever its processes are doing. A group is
// recorded only while its leader has not been waited for, so its number
// cannot have been reused by another group. Elsewhere Attr does nothing
// and Kill kills the command alone.
package procgroup

import (
	"os"
	"sync"
)

var live struct {
	sync.Mutex
	groups map[int]*os.Process
}

// Started records p, a command started with Attr's attributes, until
// Ended.
func Started(p *os.Process) {
	live.Lock()
	defer live.Unlock()
	if live.groups == nil {
		live.groups = map[int]*os.Process{}
	}
	live.groups[p.Pid] = p
}

// Ended forgets p: it has been waited for.
func Ended(p *os.Process) {
	live.Lock()
	defer live.Unlock()
	delete(live.groups, p.Pid)
}

// Live is how many commands are recorded.
func Live() int {
	live.Lock()
	defer live.Unlock()
	return len(live.groups)
}

// KillAll kills every recorded command and its process group. The
// commands stay recorded until whoever waits for them calls Ended.
func KillAll() {
	live.Lock()
	ps := make([]*os.Process, 0, len(live.groups))
	for _, p := range live.groups {
		ps = append(ps, p)
	}
	live.Unlock()
	for _, p := range ps {
		Kill(p)
	}
}
