package luaproc

// Attacks on preemption (preempt.go): code a nested process may run
// while its caller waits for it, and what a script may see of it.

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// preemptInGoLua: the worker spins in a loop whose time goes to a long
// Go function that checks the interrupt (table.concat ticks: lua's
// Tick, interrupt.go). A preemption asked for while the concat runs must
// not be lost there: the worker steps aside at its next instruction
// after the concat, and the caller sees the test's message.
const preemptInGoLua = `
local big = {}
for i = 1, 200000 do big[i] = "x" end
function worker(to)
  process.send(to, process.self())
  local req = process.receive()
  process.send(to, "running")
  local n = 0
  repeat n = n + #table.concat(big) until probe.stopped()
  process.send(req, n > 0)
  process.receive()
end
function caller(to)
  local w = process.spawn("worker", to)
  process.receive()
  process.send(w, process.self())
  local first = process.receive() -- runs w's step nested
  process.send(to, first)
  return first, (process.receive())
end`

// TestPreemptionNotLostInALongGoFunction: a message for the caller
// reaches it while its nested peer spins through table.concat.
func TestPreemptionNotLostInALongGoFunction(t *testing.T) {
	rt, stop := preemptRuntime(t, 1)
	defer stop()
	h, _, inbox := preemptStart(t, rt, preemptInGoLua, "")
	require.NoError(t, rt.Send(h.PID(), "from Go"))
	msg, err := inbox.Receive(testContext(t)) // the caller, released
	require.NoError(t, err, "the caller stays captive: the preemption was taken inside table.concat's Tick and dropped")
	require.Equal(t, "from Go", msg.Value)
	stop()
	res, err := h.Wait(testContext(t))
	require.NoError(t, err)
	require.Equal(t, []any{"from Go", true}, res)
}
