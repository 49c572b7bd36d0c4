package luaproc

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

func TestSmoke(t *testing.T) {
	rt, out, _ := newTestRuntime(t, Options{})
	res, err := runLua(t, rt, "smoke.lua", `
		local function main(a, b)
			print("hello", a, b)
			time.sleep(0.01)
			local ok, x = pcall(function() time.sleep(0.01); return 42 end)
			local r = {process.all(function() time.sleep(0.02); return 1 end, function() time.sleep(0.01); return 2 end)}
			return a .. b, ok, x, r[1], r[2]
		end
		return {main = main}
	`, "", "x", "y")
	require.NoError(t, err)
	require.Equal(t, payload.Payloads{"xy", true, int64(42), int64(1), int64(2)}, res)
	require.Equal(t, "hello\tx\ty\n", out.String())
}
