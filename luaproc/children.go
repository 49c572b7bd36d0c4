package luaproc

import (
	"slices"

	"github.com/luarun/luarun/scheduler"
)

// childSet is what a process keeps of the processes it spawned, so that
// process.wait works on one after it ended (the scheduler forgets a
// process when it ends; its Handle still has the result).
//
// The scheduler hands PIDs out in increasing order, so a process's
// spawns come in order: the set is a slice sorted by PID, appended to,
// searched by bisection. A child process.wait has collected keeps its
// place with its handle dropped (a hole), and the holes are squeezed out
// once they are half the slice. (A Go map cost a spawn loop of a million
// processes a twentieth of its time in mapassign.)
type childSet struct {
	entries []childEntry
	holes   int
}

type childEntry struct {
	pid scheduler.PID
	h   scheduler.Handle // zero: collected (a hole)
}

// add records h, whose PID is most likely above every PID in the set.
func (c *childSet) add(h scheduler.Handle) {
	e := childEntry{h.PID(), h}
	if n := len(c.entries); n == 0 || c.entries[n-1].pid < e.pid {
		c.entries = append(c.entries, e)
		return
	}
	i, _ := c.search(e.pid) // out of order: not from this scheduler's counter
	c.entries = slices.Insert(c.entries, i, e)
}

// get returns the handle of child pid, if the set has it.
func (c *childSet) get(pid scheduler.PID) (scheduler.Handle, bool) {
	if i, ok := c.search(pid); ok && c.entries[i].h != (scheduler.Handle{}) {
		return c.entries[i].h, true
	}
	return scheduler.Handle{}, false
}

// remove forgets child pid.
func (c *childSet) remove(pid scheduler.PID) {
	i, ok := c.search(pid)
	if !ok || c.entries[i].h == (scheduler.Handle{}) {
		return
	}
	c.entries[i].h = scheduler.Handle{}
	c.holes++
	if 2*c.holes >= len(c.entries) {
		live := c.entries[:0]
		for _, e := range c.entries {
			if e.h != (scheduler.Handle{}) {
				live = append(live, e)
			}
		}
		clear(c.entries[len(live):])
		c.entries, c.holes = live, 0
	}
}

func (c *childSet) search(pid scheduler.PID) (int, bool) {
	return slices.BinarySearchFunc(c.entries, pid, func(e childEntry, pid scheduler.PID) int {
		switch {
		case e.pid < pid:
			return -1
		case e.pid > pid:
			return 1
		}
		return 0
	})
}
