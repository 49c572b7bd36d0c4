package tests

// Shutdown is bounded (LUA_API.md "Hostile or broken scripts"): a signal,
// --timeout or process.kill ends a process blocked in os.execute,
// io.popen or io.read at once, with the commands it started and what
// they started in turn (their process group); SIGTERM exits 143. Each
// used to wait for the command (300 s here) or for ever.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bound only catches a hang: each of these ends in milliseconds, where
// the commands run 300 s and the grace is 60 s.
const bound = 30 * time.Second

// startAndSignal starts luarun with args (stdin: in, or nothing), waits
// for its first line of output, sends sig, and returns that line, the
// exit status and how long it took to exit after the signal.
func startAndSignal(t *testing.T, in io.Reader, sig syscall.Signal, args ...string) (line string, code int, took time.Duration) {
	t.Helper()
	cmd := exec.Command(luarun, append([]string{"--shutdown-timeout", "60s"}, args...)...)
	cmd.Stdin = in
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	line, err = bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	t0 := time.Now()
	require.NoError(t, cmd.Process.Signal(sig))
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(bound):
		cmd.Process.Kill()
		t.Fatalf("luarun did not exit within %v of %v", bound, sig)
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	return strings.TrimSpace(line), ee.ExitCode(), time.Since(t0)
}

// assertGone: process pid has ended (or is a zombie no one has reaped
// yet), within bound.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		if _, err := os.Stat("/proc/self"); err != nil { // no /proc: ask kill
			if syscall.Kill(pid, 0) != nil {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("pid %d, started by a command of the script, outlived luarun", pid)
}

// TestSignalEndsOsExecute: SIGTERM ends luarun (143) while its main
// process waits in os.execute, and the command's background child dies.
func TestSignalEndsOsExecute(t *testing.T) {
	path := writeScript(t, "execute.lua", `os.execute("sleep 300 & echo $!; sleep 300")`)
	line, code, took := startAndSignal(t, nil, syscall.SIGTERM, path)
	assert.Equal(t, 143, code)
	t.Logf("exited %v after SIGTERM", took)
	pid, err := strconv.Atoi(line)
	require.NoError(t, err, line)
	assertGone(t, pid)
}

// TestSignalEndsPopenRead: SIGINT ends luarun (130) while its main
// process reads an io.popen pipe, and the command's children die.
func TestSignalEndsPopenRead(t *testing.T) {
	path := writeScript(t, "popen.lua", `
local f = io.popen("sleep 300 & echo $!; sleep 300")
print(f:read("*l"))
f:read("*a")`)
	line, code, took := startAndSignal(t, nil, syscall.SIGINT, path)
	assert.Equal(t, 130, code)
	t.Logf("exited %v after SIGINT", took)
	pid, err := strconv.Atoi(line)
	require.NoError(t, err, line)
	assertGone(t, pid)
}

// TestSignalEndsStdinRead: SIGTERM ends luarun while its main process
// waits in io.read for input that never comes.
func TestSignalEndsStdinRead(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close() // open until the end: no EOF
	defer r.Close()
	path := writeScript(t, "read.lua", `print("reading") print(io.read())`)
	line, code, took := startAndSignal(t, r, syscall.SIGTERM, path)
	assert.Equal(t, "reading", line)
	assert.Equal(t, 143, code)
	t.Logf("exited %v after SIGTERM", took)
}

// TestTimeoutEndsOsExecute: --timeout ends a main process waiting in
// os.execute (124) at the timeout, not when the command ends.
func TestTimeoutEndsOsExecute(t *testing.T) {
	path := writeScript(t, "execute.lua", `os.execute("sleep 300")`)
	r := runLuarun(t, "", "--timeout", "500ms", "--shutdown-timeout", "60s", path)
	assert.Equal(t, 124, r.code, r.stderr)
	assert.Less(t, r.took, bound)
	t.Logf("exited after %v (timeout 500ms)", r.took)
}

// TestKillEndsOsExecute: process.kill ends a process waiting in
// os.execute, and the command's background child dies with it.
func TestKillEndsOsExecute(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	path := writeScript(t, "kill.lua", `
local pidfile = ...
function worker(pidfile) os.execute("sleep 300 & echo $! > " .. pidfile .. "; sleep 300") end
function main()
  local pid = process.spawn("worker", pidfile)
  while true do -- until the command has written its child's pid
    local f = io.open(pidfile)
    local s = f and f:read("*a")
    if f then f:close() end
    if s and s:match("\n") then break end
    time.sleep(0.01)
  end
  process.kill(pid, "enough")
  print(process.wait(pid))
end`)
	r := runLuarun(t, "", path, pidfile)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "false\tkilled: enough\n", r.stdout)
	assert.Less(t, r.took, bound)
	data, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	assertGone(t, pid)
}
