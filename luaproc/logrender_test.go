package luaproc

// log.* writes tables as Lua would (logrender.go), in every format, and
// never raises: a __tostring that fails is written, not raised.

import (
	"log/slog"
	"testing"

	"github.com/charmbracelet/log"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const logTablesSrc = `
function main()
  local bad = setmetatable({}, {__tostring = function() error("nope", 0) end})
  local cyc = {1, 2}
  cyc.self = cyc
  log.info("tables", "t", {a = {b = 1}}, "l", {"tea", "cake"},
    "m", {1, 2, x = "a b", ["a b"] = true, [10] = 1.5, ["end"] = 0}, "cyc", cyc)
  log.info(bad, bad, bad, "n", 3)
  return "went on"
end`

func TestLogWritesTablesAsLua(t *testing.T) {
	for _, f := range []struct {
		name string
		fmt  log.Formatter
		want []string
	}{
		{"text", log.TextFormatter, []string{
			`t="{a = {b = 1}}"`, `l="{\"tea\", \"cake\"}"`,
			`m="{1, 2, [10] = 1.5, [\"a b\"] = true, [\"end\"] = 0, x = \"a b\"}"`,
			`cyc="{1, 2, self = <cycle>}"`,
			`INFO <__tostring error: nope>`, `n=3`,
		}},
		{"json", log.JSONFormatter, []string{
			`"t":"{a = {b = 1}}"`, `"l":"{\"tea\", \"cake\"}"`, `"msg":"<__tostring error: nope>"`, `"n":3`,
		}},
		{"logfmt", log.LogfmtFormatter, []string{`t="{a = {b = 1}}"`, `msg="<__tostring error: nope>"`}},
	} {
		t.Run(f.name, func(t *testing.T) {
			logs := &syncBuffer{}
			rt, _, _ := newTestRuntime(t, Options{Workers: 2, Logger: slog.New(log.NewWithOptions(logs, log.Options{Formatter: f.fmt}))})
			res, err := runLua(t, rt, "log.lua", logTablesSrc, "main")
			require.NoError(t, err, "logging never raises")
			require.Equal(t, []any{"went on"}, []any(res))
			for _, w := range f.want {
				assert.Contains(t, logs.String(), w)
			}
		})
	}
}
