package luaproc

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// TestRemoteEndsKeepNothingForAnEndedWaiter: the ends of processes
// started on other nodes are kept for their waiter until it takes them
// or ends; an end that comes after its waiter ended (or whose down
// follows it) leaves no entry behind; one that comes before spawn_on
// noted its PID is kept for the waiter.
func TestRemoteEndsKeepNothingForAnEndedWaiter(t *testing.T) {
	var r remoteEnds
	const waiter = scheduler.PID(7)
	child, early, ended := scheduler.NodePID(2, 1), scheduler.NodePID(2, 2), scheduler.NodePID(2, 3)
	for _, pid := range []scheduler.PID{child, ended} {
		r.mu.Lock()
		r.entry(pid).waiter = waiter
		r.mu.Unlock()
	}
	r.end(ended, payload.Payloads{true}, true)
	req := r.begin()
	r.end(early, payload.Payloads{true, "early"}, true) // before its spawn_on answer
	r.claim(early, waiter)
	r.finish(req)
	if e := r.of(early, waiter); assert.NotNil(t, e) {
		<-e.done
		assert.Equal(t, payload.Payloads{true, "early"}, e.result)
	}
	assert.Nil(t, r.of(child, waiter+1), "another process's")
	r.dropWaiter(waiter)
	assert.Len(t, r.ends, 1, "the one still running stays until its end comes")
	r.end(child, payload.Payloads{true}, true) // its result
	r.end(child, payload.Payloads{false, "down"}, false)
	assert.Empty(t, r.ends)
}
