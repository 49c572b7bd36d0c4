//go:build unix

package luaproc

// The toolbox a script expects (issue 31, item 5), driven from Lua as a
// user would: exec.run's env, http's follow_redirects and final url,
// exec.start's streams, pool.map.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/payload"
)

// TestExecRunEnv: env adds to luarun's environment (false removes a
// variable), clear_env starts from an empty one; bad entries raise.
func TestExecRunEnv(t *testing.T) {
	t.Setenv("LUARUN_TEST_INHERITED", "kept")
	t.Setenv("LUARUN_TEST_DROPPED", "there")
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"exec"}})
	src := `
local function show(opts)
  local r = assert(exec.run("sh", {"-c", 'echo "$LUARUN_TEST_INHERITED|$LUARUN_TEST_DROPPED|$GREETING|$N"'}, opts))
  return (r.stdout:gsub("\n$", ""))
end
function main()
  local out = {
    show(nil),
    show({env = {GREETING = "hello world", N = 5, LUARUN_TEST_DROPPED = false}}),
    show({env = {LUARUN_TEST_INHERITED = "replaced"}}),
    show({clear_env = true, env = {GREETING = "alone"}}),
  }
  local r = assert(exec.run("/usr/bin/env", {}, {clear_env = true}))
  out[#out + 1] = "[" .. r.stdout .. "]"
  local ok, err = pcall(exec.run, "true", {}, {env = {["A=B"] = "x"}})
  out[#out + 1] = err
  ok, err = pcall(exec.run, "true", {}, {env = {A = {}}})
  out[#out + 1] = err
  ok, err = pcall(exec.run, "true", {}, {env = "A=B"})
  out[#out + 1] = err
  return table.concat(out, "\n")
end`
	res, err := runLua(t, rt, "env.lua", src, "main")
	require.NoError(t, err)
	want := `kept|there||
kept||hello world|5
replaced|there||
||alone|
[]
exec.run: argument 3: env: invalid variable name "A=B"
exec.run: argument 3: env: A: string expected, got table
exec.run: argument 3: env: table expected, got string`
	assert.Equal(t, payload.Payloads{want}, res)
}

// TestHTTPRedirects: redirects are followed by default and the response
// says the final URL; follow_redirects = false returns the 3xx itself, a
// number bounds how many are followed.
func TestHTTPRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/")); {
		case r.URL.Path == "/end":
			io.WriteString(w, "arrived "+r.URL.RawQuery)
		case n > 1:
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
		default:
			http.Redirect(w, r, "/end?from=1", http.StatusMovedPermanently)
		}
	}))
	defer srv.Close()
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"http"}})
	src := `
function main(base)
  local out = {}
  local r = assert(http.get(base .. "/hop/3"))
  out[#out + 1] = r.status .. " " .. r.body .. " " .. r.url:sub(#base + 1)
  r = assert(http.get(base .. "/hop/3", {follow_redirects = false}))
  out[#out + 1] = r.status .. " " .. r.headers.location .. " " .. r.url:sub(#base + 1)
  r = assert(http.get(base .. "/hop/3", {follow_redirects = 3}))
  out[#out + 1] = r.status .. " " .. r.url:sub(#base + 1)
  local none, err = http.get(base .. "/hop/3", {follow_redirects = 2})
  out[#out + 1] = tostring(none) .. " " .. (err == "http.get " .. base .. "/hop/3: stopped after 2 redirects" and "stopped" or err)
  r = assert(http.request{url = base .. "/hop/2", method = "GET", follow_redirects = 0})
  out[#out + 1] = r.status .. " " .. r.url:sub(#base + 1)
  local ok, msg = pcall(http.get, base, {follow_redirects = -1})
  out[#out + 1] = msg
  ok, msg = pcall(http.get, base, {follow_redirects = "yes"})
  out[#out + 1] = msg
  return table.concat(out, "\n")
end`
	res, err := runLua(t, rt, "redirects.lua", src, "main", srv.URL)
	require.NoError(t, err)
	want := `200 arrived from=1 /end?from=1
302 /hop/2 /hop/3
200 /end?from=1
nil stopped
302 /hop/2
http.get: argument 2: follow_redirects: a count of redirects (0 or more) expected, got -1
http.get: argument 2: follow_redirects: boolean or number expected, got string`
	assert.Equal(t, payload.Payloads{want}, res)
}
