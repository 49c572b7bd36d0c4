package luaproc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// ioLua drives fs, http and exec from Lua the way a script would: values
// cross as Lua tables and strings, failures are nil, err, and the calls
// block inside pcall and process.all too.
const ioLua = `
local function eq(a, b, what) if a ~= b then error(what .. ": got " .. tostring(a) .. ", want " .. tostring(b), 2) end end

function files(dir)
  local path = dir .. "/a.bin"
  eq(fs.write(path, "x\0y"), true, "write")
  eq(fs.read(path), "x\0y", "read back")
  eq(fs.write(dir .. "/b.txt", ""), true, "write empty")
  local names = fs.list(dir)
  eq(#names, 2, "entries"); eq(names[1], "a.bin", "first"); eq(names[2], "b.txt", "second")
  local data, err = fs.read(dir .. "/missing")
  eq(data, nil, "missing file")
  assert(err:find("no such file or directory", 1, true), err)
  local ok, data2 = pcall(fs.read, path)
  eq(ok, true, "pcall"); eq(data2, "x\0y", "read inside pcall")
end

function web(base)
  local resp = assert(http.get(base .. "/hello", {headers = {["X-Token"] = "t1"}}))
  eq(resp.status, 200, "status"); eq(resp.body, "hello t1", "body")
  eq(resp.headers["content-type"], "text/plain", "content-type")
  local missing = assert(http.get(base .. "/nope"))
  eq(missing.status, 404, "404 is a response")
  local echo = assert(http.request{method = "POST", url = base .. "/echo", body = "ping\0", headers = {}})
  eq(echo.body, "POST ping\0", "echo")
  -- three requests in flight together: /barrier answers once all arrived
  local a, b, c = process.all(
    function() return http.get(base .. "/barrier").body end,
    function() return http.get(base .. "/barrier").body end,
    function() return http.get(base .. "/barrier").body end)
  eq(a .. b .. c, "okokok", "process.all")
end

function commands(dir)
  local r = assert(exec.run("sh", {"-c", "echo out; echo err >&2; exit 3"}))
  eq(r.code, 3, "code"); eq(r.stdout, "out\n", "stdout"); eq(r.stderr, "err\n", "stderr")
  r = assert(exec.run("cat", {}, {stdin = "fed\0in"}))
  eq(r.stdout, "fed\0in", "stdin")
  r = assert(exec.run("pwd", {}, {dir = dir}))
  eq(r.stdout, dir .. "\n", "dir")
  local none, err = exec.run("no-such-command-luarun", {})
  eq(none, nil, "missing command")
  assert(err:find("not found", 1, true), err)
end

-- misuse raises, naming the function and the argument; I/O failures do not
function misuse(dir)
  local function raises(what, f, ...)
    local ok, err = pcall(f, ...)
    if ok then error(what .. ": did not raise", 2) end
    return err
  end
  eq(raises("fs.read table", fs.read, {}), "fs.read: argument 1: string expected, got table", "fs.read({})")
  eq(raises("fs.write", fs.write, dir .. "/x"), "fs.write: argument 2: string expected, got no value", "fs.write(path)")
  eq(raises("exec.run", exec.run, "true", 5), "exec.run: argument 2: list of strings expected, got number", "exec.run args")
  assert(raises("http.get nan", http.get, "http://127.0.0.1:1/", {timeout = 0/0}):find("^http.get: argument 2: timeout"))
  assert(raises("sleep nan", time.sleep, 0/0):find("NaN", 1, true))
  local none, err = fs.read(dir .. "/missing")
  eq(none, nil, "a missing file is not misuse")
end

function slow(base, parent) return http.get(base .. "/slow?parent=" .. parent) end
function killed(base)
  local pid = process.spawn("slow", base, process.self())
  assert(process.receive() == "in handler")
  process.kill(pid, "enough")
  return process.wait(pid)
end
`

func TestIOFromLua(t *testing.T) {
	var arrived atomic.Int32
	barrier := make(chan struct{})
	cancelled := make(chan struct{})
	var rt *Runtime
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello "+r.Header.Get("X-Token"))
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Method+" "+string(body))
		case "/barrier":
			if arrived.Add(1) == 3 {
				close(barrier)
			}
			select {
			case <-barrier:
				io.WriteString(w, "ok")
			case <-time.After(5 * time.Second):
				http.Error(w, "not concurrent", 500)
			}
		case "/slow":
			parent, err := strconv.ParseUint(r.URL.Query().Get("parent"), 10, 64)
			require.NoError(t, err)
			require.NoError(t, rt.Send(scheduler.PID(parent), "in handler"))
			select {
			case <-r.Context().Done():
				close(cancelled)
			case <-time.After(5 * time.Second):
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rt, _, _ = newTestRuntime(t, Options{Workers: 2, Allow: []string{"fs", "http", "exec"}})
	dir := t.TempDir()

	_, err := runLua(t, rt, "io.lua", ioLua, "files", dir)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "a.bin"))
	require.NoError(t, err)
	assert.Equal(t, "x\x00y", string(data))

	_, err = runLua(t, rt, "io.lua", ioLua, "web", srv.URL)
	require.NoError(t, err)
	_, err = runLua(t, rt, "io.lua", ioLua, "commands", dir)
	require.NoError(t, err)
	_, err = runLua(t, rt, "io.lua", ioLua, "misuse", dir)
	require.NoError(t, err)

	s, err := rt.LoadString("io.lua", ioLua)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, "killed", srv.URL)
	require.NoError(t, err)
	res, err := h.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, false, res[0])
	assert.Equal(t, "killed: enough", res[1])
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the killed process's request was not aborted")
	}
}
