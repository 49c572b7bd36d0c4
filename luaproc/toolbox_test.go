//go:build unix

package luaproc

// The toolbox a script expects (issue 31, item 5), driven from Lua as a
// user would: exec.run's env, http's follow_redirects and final url,
// exec.start's streams, pool.map.

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// execStartLua streams commands the way a script would.
const execStartLua = `
function main(dir)
  local out = {}
  local function add(s) out[#out + 1] = s end
  -- a conversation: answer the command's question once it asks
  local h = assert(exec.start("sh", {"-c", "echo one; echo two; read x; echo got $x; echo err >&2; exit 4"}))
  for l in h:lines() do
    add("line " .. l)
    if l == "two" then assert(h:write("hello\n") == h) end
  end
  add(inspect(h:wait()))
  -- stdin closed, the rest of stdout in wait's result
  local c = assert(exec.start("cat", {}, {dir = dir, env = {X = "1"}}))
  c:write("a\n"); c:write("b\n")
  assert(c:close_stdin())
  add(tostring(c:write("late")))
  add(inspect(c:wait()))
  -- a loop that breaks loses no line to the next one; wait has the rest
  local s = assert(exec.start("seq", {"1", "6"}))
  for l in s:lines() do if l == "2" then break end end
  local it = s:lines()
  add("then " .. it() .. " " .. it())
  add(inspect(s:wait()))
  add(select(2, s:wait()))
  -- kill
  local k = assert(exec.start("sleep", {"60"}))
  add(tostring(k:kill()) .. " " .. select(2, k:wait()))
  add(select(2, exec.start("no-such-command-luarun", {})))
  add(select(2, pcall(exec.start, "cat", {}, {stdin = "x"})))
  return table.concat(out, "\n")
end

-- waits in lines (one worker in all) until main, which could not run if
-- that wait held the worker, makes the file it waits for
function waiter(flag)
  local h = assert(exec.start("sh", {"-c", "while [ ! -e '" .. flag .. "' ]; do sleep 0.01; done; echo seen"}))
  local l = h:lines()()
  h:wait()
  return l
end
function yields(flag)
  local pid = process.spawn("waiter", flag)
  time.sleep(0.05)
  assert(fs.write(flag, ""))
  return select(2, process.wait(pid))
end

-- reads the pids of a shell and its background child, then ends
-- without waiting for them
function leaves()
  local h = assert(exec.start("sh", {"-c", "sleep 60 & echo $!; echo $$; exec sleep 61"}))
  local it = h:lines()
  return it(), it()
end`

// TestExecStart: exec.start's handle streams stdout lines, takes stdin,
// waits, kills; its blocking calls yield the process, not the worker.
func TestExecStart(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Workers: 1, Allow: []string{"exec", "fs"}})
	dir := t.TempDir()
	res, err := runLua(t, rt, "start.lua", execStartLua, "main", dir)
	require.NoError(t, err)
	want := `line one
line two
line got hello
{code = 4, stderr = "err\n", stdout = ""}
nil
{code = 0, stderr = "", stdout = "a\nb\n"}
then 3 4
{code = 0, stderr = "", stdout = "5\n6\n"}
exec:wait: attempt to use a finished command
true exec.start sleep: terminated (signal: killed)
exec.start no-such-command-luarun: executable file not found in $PATH
exec.start: argument 3: exec.start takes no stdin or timeout (write to it, or kill it)`
	assert.Equal(t, payload.Payloads{want}, res)

	res, err = runLua(t, rt, "start.lua", execStartLua, "yields", filepath.Join(dir, "flag"))
	require.NoError(t, err)
	assert.Equal(t, payload.Payloads{"seen"}, res)
	require.Eventually(t, func() bool { return rt.io.Streams() == 0 }, 20*time.Second, time.Millisecond)
}

// TestExecStartEndsWithProcess: a process that ends without waiting for
// its command has the command and its group killed, the handle dropped.
func TestExecStartEndsWithProcess(t *testing.T) {
	rt, _, _ := newTestRuntime(t, Options{Allow: []string{"exec"}})
	res, err := runLua(t, rt, "start.lua", execStartLua, "leaves")
	require.NoError(t, err)
	require.Len(t, res, 2)
	for _, v := range res {
		pid, err := strconv.Atoi(v.(string))
		require.NoError(t, err)
		assert.Eventually(t, func() bool {
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
		}, 20*time.Second, 5*time.Millisecond, "process %d still runs", pid)
	}
	assert.Eventually(t, func() bool { return rt.io.Streams() == 0 }, 20*time.Second, time.Millisecond)
}

// isZombie reports whether pid has ended but was not reaped yet (Linux;
// elsewhere false).
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
