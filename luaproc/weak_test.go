package luaproc

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/luarun/luarun/payload"
)

// weakRounds is a process that fills weak tables with objects it keeps
// and objects it drops, collects, and checks after each collection that
// exactly the dropped ones are gone.
const weakRounds = `
local keep, w, v = {}, setmetatable({}, {__mode = "k"}), setmetatable({}, {__mode = "v"})
for round = 1, 8 do
  for i = 1, 40 do
    local k = {}
    keep[#keep + 1] = k
    w[k] = i; w[{}] = i; v[i] = k; v[-i] = {}
  end
  collectgarbage()
  local n = 0
  for k in pairs(w) do n = n + 1 end
  assert(n == #keep, "weak keys: " .. n .. " of " .. #keep)
  for i = 1, 40 do
    assert(v[i] == keep[#keep - 40 + i], "a kept value died")
    assert(v[-i] == nil, "a dropped value lived")
  end
end
return #keep
`

// Processes collecting at the same time clear only their own weak
// tables, and each sees exactly its own dead entries go (run with -race:
// each state's weak set is its own).
func TestWeakTablesConcurrentCollections(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := runLua(t, rt, "weak.lua", weakRounds, "")
			assert.NoError(t, err)
			assert.Equal(t, payload.Payloads{int64(320)}, res)
		}()
	}
	wg.Wait()
}
