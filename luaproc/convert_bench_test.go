package luaproc

import (
	"testing"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/serve"
)

// BenchmarkToLuaResponse: converting an http.get result (three fields,
// four headers, one of them not among the interned keys) into Lua tables,
// per result: luarun's conversion (tables built through table.go's
// mirror; as a message, and as a command's result: fromApp, which checks
// integers past 2^53)  vs  the same tables built with gopher-lua's public
// API (CreateTable and RawSetString).
func BenchmarkToLuaResponse(b *testing.B) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	body := string(make([]byte, 1024))
	headers := map[string]any{
		"content-length": "1024",
		"content-type":   "application/octet-stream",
		"date":           "Sun, 22 Nov 2026 08:00:00 GMT",
		"x-served-by":    "cache-fra1",
	}
	res := map[string]any{"status": int64(200), "body": body, "headers": headers}
	b.Run("luarun", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			toLuaValue(L, res)
		}
	})
	b.Run("luarun-command-result", func(b *testing.B) { // resultValues' conversion
		b.ReportAllocs()
		for range b.N {
			if _, err := fromApp(L, res, "result"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gopher-lua-RawSetString", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			h := L.CreateTable(0, len(headers))
			for k, v := range headers {
				h.RawSetString(k, lua.LString(v.(string)))
			}
			t := L.CreateTable(0, len(res))
			t.RawSetString("status", lua.LNumber(res["status"].(int64)))
			t.RawSetString("body", lua.LString(res["body"].(string)))
			t.RawSetString("headers", h)
		}
	})
}

// BenchmarkRequestTable: an http.serve request's table (serving.go's
// requestTable) for a request of wrk's and curl's shape: one query pair,
// two headers.
func BenchmarkRequestTable(b *testing.B) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	r := &serve.Request{Method: "GET", Path: "/", URL: "/?name=bench", Remote: "127.0.0.1:40000",
		Query:   []serve.Field{{Name: "name", Value: "bench"}},
		Headers: []serve.Field{{Name: "user-agent", Value: "bench"}, {Name: "host", Value: "127.0.0.1:8080"}}}
	b.ReportAllocs()
	for b.Loop() {
		requestTable(L, r)
	}
}
