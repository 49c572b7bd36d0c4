package commands

// fs.write's temp files, and those a killed luarun leaves.
//
// fs.write writes a temp file beside its target and renames it over the
// target. A kill -9 (or a crash, or a power cut) between the two leaves
// the temp file, and nothing would ever remove it. So a temp file's name
// says whose it is: ".<base>.luarun-<pid>-<run>-<rand>.tmp", pid being
// the writing OS process and run a random token of that process's run.
// The first write into a directory, and again a minute after its last
// sweep, sweeps it (sweepTemps): it removes each such file that is
// stale, that is
//   - not this run's (another run token: this run's are in flight), and
//   - its writer is gone: no process with that pid (kill(pid, 0) fails
//     with ESRCH), or the pid is this process's own (a run before this
//     one that had the same pid, as PID 1 in a container has each time),
//   - and it has not been written for a minute (staleTempAge): a writer
//     in another PID namespace sharing the directory writes its chunks
//     far more often than that.
// Why not O_TMPFILE and linkat: linkat cannot replace the target, so a
// named temp file and a rename are still needed (the window shrinks but
// stays), /proc or CAP_DAC_READ_SEARCH is needed to name the file, many
// file systems refuse O_TMPFILE, and it is Linux only; names that say
// whose they are work everywhere and also clean up after older crashes.
// The sweep reads the directory once per minute at most per directory
// (sweptDirs remembers up to maxSweptDirs of them).

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	tempMarker    = ".luarun-"
	tempSuffix    = ".tmp"
	staleTempAge  = time.Minute
	sweepInterval = time.Minute
	maxSweptDirs  = 4096
)

// runToken tells this run's temp files from those of an earlier run
// that had the same pid.
var runToken = strconv.FormatUint(rand.Uint64(), 36)

// sweeps records when each directory was last swept.
var sweeps struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// createTemp creates a new file ".<base>.luarun-<pid>-<run>-<rand>.tmp"
// in dir with mode 0666 less the umask (os.CreateTemp's 0600 would stick
// to a new file).
func createTemp(dir, base string) (*os.File, error) {
	prefix := "." + base + tempMarker + strconv.Itoa(os.Getpid()) + "-" + runToken + "-"
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)+tempSuffix)
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fs.ErrExist
}

// sweepTemps removes the stale temp files in dir, unless it was swept
// less than a minute ago. Failures are ignored: the write goes on.
func sweepTemps(dir string) {
	now := time.Now()
	sweeps.mu.Lock()
	if last, ok := sweeps.last[dir]; ok && now.Sub(last) < sweepInterval {
		sweeps.mu.Unlock()
		return
	}
	if sweeps.last == nil || len(sweeps.last) >= maxSweptDirs {
		sweeps.last = map[string]time.Time{}
	}
	sweeps.last[dir] = now
	sweeps.mu.Unlock()

	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	for {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			if staleTemp(dir, e, now) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		if err != nil {
			return // io.EOF at the end
		}
	}
}

// staleTemp reports whether entry e of dir is a temp file that a writer
// which is gone left (see the file comment).
func staleTemp(dir string, e fs.DirEntry, now time.Time) bool {
	pid, run, ok := parseTempName(e.Name())
	if !ok || run == runToken || !e.Type().IsRegular() {
		return false
	}
	if pid != os.Getpid() && processAlive(pid) {
		return false
	}
	fi, err := e.Info()
	return err == nil && now.Sub(fi.ModTime()) >= staleTempAge
}

// parseTempName returns the pid and run token in a temp file's name, or
// false if name is not one createTemp makes.
func parseTempName(name string) (pid int, run string, ok bool) {
	i := strings.LastIndex(name, tempMarker)
	if !strings.HasPrefix(name, ".") || i < 1 || !strings.HasSuffix(name, tempSuffix) {
		return 0, "", false
	}
	parts := strings.Split(strings.TrimSuffix(name[i+len(tempMarker):], tempSuffix), "-")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return 0, "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, parts[1], true
}
