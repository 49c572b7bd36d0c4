package luaproc

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkToLuaResponse: converting an http.get result (three fields,
// three headers) into Lua tables, per result.
func BenchmarkToLuaResponse(b *testing.B) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	body := string(make([]byte, 1024))
	res := map[string]any{
		"status": int64(200),
		"body":   body,
		"headers": map[string]any{
			"content-length": "1024",
			"content-type":   "application/octet-stream",
			"date":           "Sun, 22 Nov 2026 08:00:00 GMT",
		},
	}
	b.ReportAllocs()
	for range b.N {
		toLuaValue(L, res)
	}
}
