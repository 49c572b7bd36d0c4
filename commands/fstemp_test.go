package commands

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forgetSweeps lets the next write to any directory sweep it again.
func forgetSweeps() {
	sweeps.mu.Lock()
	sweeps.last = nil
	sweeps.mu.Unlock()
}

// backdate makes the file at path look unwritten for two minutes.
func backdate(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-2 * staleTempAge)
	require.NoError(t, os.Chtimes(path, old, old))
}

// blockingContext is done never; its Err, which writeChunks calls
// before each chunk, reports the temp file on stdout at the second call
// (one chunk written) and then blocks for good.
type blockingContext struct {
	context.Context
	calls int
	dir   string
}

func (c *blockingContext) Err() error {
	if c.calls++; c.calls == 2 {
		names, _ := filepath.Glob(filepath.Join(c.dir, ".*"+tempSuffix))
		fmt.Println("writing", strings.Join(names, " "))
		select {}
	}
	return nil
}

// TestFSWriteKilledChild is the child of TestKilledWriteTempIsSwept: it
// writes into $LUARUN_FSWRITE_CHILD and blocks midway, to be killed.
func TestFSWriteKilledChild(t *testing.T) {
	dir := os.Getenv("LUARUN_FSWRITE_CHILD")
	if dir == "" {
		t.Skip("run by TestKilledWriteTempIsSwept")
	}
	ctx := &blockingContext{Context: context.Background(), dir: dir}
	writeAtomic(ctx, filepath.Join(dir, "f"), strings.Repeat("x", 2*ioChunk))
}

// TestKilledWriteTempIsSwept: a process killed with SIGKILL during
// fs.write leaves its temp file (nothing can stop that); the next write
// into that directory, once the file is a minute old, removes it and
// leaves the file written and any other file alone. Before, each kill -9
// left a ".f.tmp<random>" forever.
func TestKilledWriteTempIsSwept(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL, and processAlive cannot tell")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("keep"), 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestFSWriteKilledChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LUARUN_FSWRITE_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line := ""
	for sc := bufio.NewScanner(out); !strings.HasPrefix(line, "writing") && sc.Scan(); {
		line = sc.Text()
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL
	cmd.Wait()
	temp := strings.TrimPrefix(line, "writing ")
	require.FileExists(t, temp, "the killed write left its temp file")
	assert.Contains(t, temp, tempMarker+strconv.Itoa(cmd.Process.Pid)+"-")

	backdate(t, temp)
	forgetSweeps()
	require.NoError(t, writeAtomic(context.Background(), filepath.Join(dir, "g"), "new"))
	assert.NoFileExists(t, temp, "the next write swept it")
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	var left []string
	for _, e := range names {
		left = append(left, e.Name())
	}
	assert.Equal(t, []string{"g", "other"}, left)
}

// TestSweepKeepsLiveTemps: the sweep removes only temp files whose writer
// is gone and that are a minute old: not this run's, not a live
// process's, not a fresh one (a writer in another PID namespace), not a
// name createTemp does not make, not a directory; it does remove one of
// an earlier run with this process's own pid (PID 1 in a container).
func TestSweepKeepsLiveTemps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("processAlive cannot tell")
	}
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadPID, me, parent := dead.Process.Pid, os.Getpid(), os.Getppid()
	name := func(base string, pid int, run string) string {
		return "." + base + tempMarker + strconv.Itoa(pid) + "-" + run + "-abc" + tempSuffix
	}
	dir := t.TempDir()
	files := map[string]bool{ // name → swept
		name("dead", deadPID, "r1"):           true,
		name("mine-earlier", me, "r1"):        true,
		name("mine-now", me, runToken):        false,
		name("live", parent, "r1"):            false,
		name("x.luarun-1-a-b", deadPID, "r2"): true,
		".f.tmp123":                           false,
		"f" + tempMarker + "1-r-a.tmp":        false,
		".f" + tempMarker + "x-r-a.tmp":       false,
		".f" + tempMarker + "1-r.tmp":         false,
	}
	for n := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
		backdate(t, filepath.Join(dir, n))
	}
	fresh := name("fresh", deadPID, "r1")
	require.NoError(t, os.WriteFile(filepath.Join(dir, fresh), nil, 0o644))
	files[fresh] = false
	asDir := name("dir", deadPID, "r1")
	require.NoError(t, os.Mkdir(filepath.Join(dir, asDir), 0o755))
	backdate(t, filepath.Join(dir, asDir))
	files[asDir] = false

	forgetSweeps()
	sweepTemps(dir)
	for n, swept := range files {
		_, err := os.Lstat(filepath.Join(dir, n))
		assert.Equal(t, swept, os.IsNotExist(err), "%s swept: %v", n, swept)
	}

	// a minute later at most once: a second write does not read it again
	again := name("again", deadPID, "r1")
	require.NoError(t, os.WriteFile(filepath.Join(dir, again), nil, 0o644))
	backdate(t, filepath.Join(dir, again))
	sweepTemps(dir)
	assert.FileExists(t, filepath.Join(dir, again))
}
