//go:build unix

package commands

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExecRun(t *testing.T) {
	s := newSched(t)

	h, _ := call(t, s, "exec.run", "sh", []any{"-c", "exit 3"})
	got, err := result(h)
	require.NoError(t, err, "a non-zero exit is a result")
	assert.Equal(t, map[string]any{"code": int64(3), "stdout": "", "stderr": ""}, got)

	h, _ = call(t, s, "exec.run", "sh", []any{"-c", `echo out; echo "$1" >&2`, "sh", "a b"})
	got, err = result(h)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"code": int64(0), "stdout": "out\n", "stderr": "a b\n"}, got)

	// stdin, binary-safe; {} options and numbers as arguments are accepted
	h, _ = call(t, s, "exec.run", "cat", []any{}, map[string]any{"stdin": "one\x00two"})
	got, _ = result(h)
	assert.Equal(t, "one\x00two", got.(map[string]any)["stdout"])
	h, _ = call(t, s, "exec.run", "echo", []any{"n", int64(5), 1.5}, []any{})
	got, _ = result(h)
	assert.Equal(t, "n 5 1.5\n", got.(map[string]any)["stdout"])
	h, _ = call(t, s, "exec.run", "cat", nil, map[string]any{"stdin": int64(7)})
	got, _ = result(h)
	assert.Equal(t, "7", got.(map[string]any)["stdout"])

	// a timeout too large for a deadline is none
	for _, d := range []any{1e10, math.Inf(1), int64(math.MaxInt64)} {
		h, _ = call(t, s, "exec.run", "echo", []any{"ok"}, map[string]any{"timeout": d})
		got, err = result(h)
		require.NoError(t, err)
		assert.Equal(t, "ok\n", got.(map[string]any)["stdout"])
	}

	// no stdin given: the child reads an empty one, it does not block
	h, took := call(t, s, "exec.run", "cat", nil)
	got, err = result(h)
	require.NoError(t, err)
	assert.Equal(t, "", got.(map[string]any)["stdout"])
	assert.Less(t, took, 3*time.Second)

	// dir
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	h, _ = call(t, s, "exec.run", "pwd", nil, map[string]any{"dir": dir})
	got, _ = result(h)
	assert.Equal(t, real+"\n", got.(map[string]any)["stdout"])
}

func TestExecErrors(t *testing.T) {
	s := newSched(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"nosuchcmd-luarun", nil}, "exec.run nosuchcmd-luarun: executable file not found in $PATH"},
		{[]any{"/no/such/cmd", nil}, "exec.run /no/such/cmd: no such file or directory"},
		{[]any{"pwd", nil, map[string]any{"dir": dir + "/no"}}, "exec.run pwd: dir " + dir + "/no: no such file or directory"},
		{[]any{"pwd", nil, map[string]any{"dir": file}}, "exec.run pwd: dir " + file + ": not a directory"},
		{[]any{"sh", []any{"-c", "kill -9 $$"}}, "exec.run sh: terminated (signal: killed)"},
		{[]any{true}, "exec.run: argument 1: string expected, got boolean"},
		{[]any{int64(1)}, "exec.run 1: executable file not found in $PATH"}, // a number is a string
		{[]any{"sh\x00"}, "exec.run: argument 1 contains a NUL byte"},
		{[]any{"sh", []any{"-c", "a\x00b"}}, "exec.run: argument 2: [2] contains a NUL byte"},
		{[]any{"sh", map[string]any{"a": "b"}}, "exec.run: argument 2: list of strings expected, got table"},
		{[]any{"pwd", nil, map[string]any{"dir": "a\x00b"}}, "exec.run: argument 3: dir contains a NUL byte"},
		{[]any{"sh", nil, map[string]any{"timeout": math.NaN()}}, "exec.run: argument 3: timeout: seconds expected, got nan"},
		{[]any{""}, "exec.run: argument 1: empty command"},
		{[]any{"sh", "-c"}, "exec.run: argument 2: list of strings expected, got string"},
		{[]any{"sh", []any{"-c", true}}, "exec.run: argument 2: list of strings expected, got boolean at [2]"},
		{[]any{"sh", nil, "x"}, "exec.run: argument 3: table expected, got string"},
		{[]any{"sh", nil, map[string]any{"stdin": []any{}}}, "exec.run: argument 3: stdin: string expected, got table"},
		{[]any{"sh", nil, map[any]any{int64(1): "x"}}, "exec.run: argument 3: table with string keys expected, got a number key"},
		{[]any{"sh", nil, map[string]any{"timeout": -1.0}}, "exec.run: argument 3: timeout: must be positive, got -1"},
	} {
		h, _ := call(t, s, "exec.run", tc.args...)
		_, err := result(h)
		assert.EqualError(t, err, tc.want)
	}
}

func TestExecTimeout(t *testing.T) {
	s := newSched(t)
	h, took := call(t, s, "exec.run", "sleep", []any{"10"}, map[string]any{"timeout": 0.1})
	_, err := result(h)
	assert.EqualError(t, err, "exec.run sleep: timed out after 100ms")
	assert.Less(t, took, 3*time.Second)

	// A shell's child holding the output pipe dies with it: the whole
	// process group is killed, well before WaitDelay would give up.
	h, took = call(t, s, "exec.run", "sh", []any{"-c", "sleep 10; echo never"}, map[string]any{"timeout": 0.1})
	_, err = result(h)
	assert.EqualError(t, err, "exec.run sh: timed out after 100ms")
	assert.Less(t, took, execWaitDelay)
}

// TestExecTimeoutKeepsOutput: a timed-out command's error carries what it
// wrote before it was killed (exec.run's third result). The marker file
// says the shell got past its writes before the timeout (not a guess
// about how long they take).
func TestExecTimeoutKeepsOutput(t *testing.T) {
	s := newSched(t)
	marker := filepath.Join(t.TempDir(), "written")
	h, _ := call(t, s, "exec.run", "sh", []any{"-c", "echo started; echo oops >&2; touch " + marker + "; sleep 60"},
		map[string]any{"timeout": 0.5})
	_, err := result(h)
	var pe *PartialError
	require.ErrorAs(t, err, &pe)
	assert.EqualError(t, err, "exec.run sh: timed out after 500ms")
	partial, ok := pe.Partial.(map[string]any)
	require.True(t, ok)
	if _, statErr := os.Stat(marker); statErr == nil {
		assert.Equal(t, map[string]any{"stdout": "started\n", "stderr": "oops\n"}, partial)
	} else {
		t.Log("the shell had not written yet when the timeout came: nothing to compare")
	}
}

// TestExecKill: killing a process during exec.run kills its child (and
// the child's children); no goroutine is left (goleak checks at exit).
func TestExecKill(t *testing.T) {
	s := newSched(t)
	fifo := filepath.Join(t.TempDir(), "pids")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	// The shell writes its pid and its child's, then waits for the child.
	script := `sleep 10 & echo $$ $! > "$1"; wait`
	h, err := s.Submit(&caller{cmd: "exec.run", args: []any{"sh", []any{"-c", script, "sh", fifo}}}, "", nil)
	require.NoError(t, err)
	b, err := os.ReadFile(fifo) // blocks until the shell has written
	require.NoError(t, err)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	require.Len(t, pids, 2)

	t0 := time.Now()
	require.NoError(t, s.Kill(h.PID(), errors.New("stop")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = h.Wait(ctx)
	assert.EqualError(t, err, "stop")
	assert.Less(t, time.Since(t0), time.Second)
	// The shell is reaped by exec.run's goroutine; the sleep, orphaned,
	// by init: both soon stop existing as processes we can signal (a
	// zombie still can, so poll).
	for _, pid := range pids {
		assert.Eventually(t, func() bool {
			return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
		}, 5*time.Second, 5*time.Millisecond, "process %d still runs", pid)
	}
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

// TestExecOutputCap: a command writing more than the cap to stdout or
// stderr is killed (its group too) and the call fails; up to the cap is a
// result.
func TestExecOutputCap(t *testing.T) {
	s, io := newSchedIO(t)
	io.maxData = 1024
	h, _ := call(t, s, "exec.run", "head", []any{"-c", "1024", "/dev/zero"})
	got, err := result(h)
	require.NoError(t, err)
	assert.Len(t, got.(map[string]any)["stdout"], 1024)

	for _, script := range []string{"yes", "yes >&2", "head -c 2000 /dev/zero; sleep 10"} {
		h, took := call(t, s, "exec.run", "sh", []any{"-c", script})
		_, err := result(h)
		assert.EqualError(t, err, "exec.run sh: output larger than 1 KiB", script)
		assert.Less(t, took, execWaitDelay, script)
	}
	h, _ = call(t, s, "exec.run", "yes", nil)
	_, err = result(h)
	assert.EqualError(t, err, "exec.run yes: output larger than 1 KiB")
}

// TestExecBackgroundChildren: what a command put in the background is
// killed once the command has exited.
func TestExecBackgroundChildren(t *testing.T) {
	s := newSched(t)
	h, _ := call(t, s, "exec.run", "sh", []any{"-c", "sleep 37 >/dev/null 2>&1 & echo $!"})
	got, err := result(h)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(got.(map[string]any)["stdout"].(string)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
	}, 5*time.Second, 5*time.Millisecond, "the background sleep %d still runs", pid)
}
