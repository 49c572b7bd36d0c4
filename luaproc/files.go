package luaproc

// Script files, compiled once per Runtime.
//
// LoadFile, process.spawn_file and require all come here. A file is
// compiled at most once per Runtime, keyed by its resolved path (absolute,
// symbolic links followed), so two names for one file share one Script;
// concurrent first loads of a file wait for one compile. A second map
// remembers the path as it was asked for, so that a process requiring a
// module that is already compiled makes no system call at all: no stat,
// no symlink walk. A failed compile is not kept: the next load tries
// again (and counts again).
//
// Without fs permission a program may load only files inside its own
// directory (see Runtime.checkInside); the check runs on the resolved
// path before the file is read, so a file outside never reaches the
// compiler, whose syntax errors would show its contents.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

type scriptFiles struct {
	mu      sync.Mutex
	byName  map[string]*Script     // path as asked for → its script
	byReal  map[string]*compileJob // resolved path → its compile
	realDir map[string]string      // directory → resolved (checkInside)

	// compiled counts compilations (LoadFile, spawn_file, require and
	// LoadString alike); written by any goroutine, read by Stats.
	compiled atomic.Int64
}

// compileJob is one file's compile; done closes when s or err is set.
type compileJob struct {
	done chan struct{}
	s    *Script
	err  error
}

func newScriptFiles() *scriptFiles {
	return &scriptFiles{byName: map[string]*Script{}, byReal: map[string]*compileJob{}, realDir: map[string]string{}}
}

// cached returns the script loaded before under this path, if any.
func (f *scriptFiles) cached(path string) *Script {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byName[path]
}

// load compiles the file at path once per resolved path. check, if not
// nil, vets the resolved path before the file is read.
func (f *scriptFiles) load(path string, check func(real string) error) (*Script, error) {
	if s := f.cached(path); s != nil {
		if check != nil {
			if err := check(s.real); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	real, err := resolvePath(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if check != nil {
		if err := check(real); err != nil {
			return nil, err
		}
	}
	s, err := f.compileOnce(path, real)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.byName[path] = s
	f.mu.Unlock()
	return s, nil
}

func (f *scriptFiles) compileOnce(path, real string) (*Script, error) {
	f.mu.Lock()
	job := f.byReal[real]
	if job != nil {
		f.mu.Unlock()
		<-job.done
		return job.s, job.err
	}
	job = &compileJob{done: make(chan struct{})}
	f.byReal[real] = job
	f.mu.Unlock()

	job.s, job.err = CompileFile(path)
	f.compiled.Add(1)
	if job.err == nil {
		job.s.real = real
	} else {
		f.mu.Lock()
		delete(f.byReal, real) // the next load tries again
		f.mu.Unlock()
	}
	close(job.done)
	return job.s, job.err
}

// resolved returns dir absolute with its symbolic links resolved,
// remembering the answer (a program's directory is asked for often).
func (f *scriptFiles) resolved(dir string) (string, error) {
	f.mu.Lock()
	r, ok := f.realDir[dir]
	f.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := resolvePath(dir)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	f.realDir[dir] = r
	f.mu.Unlock()
	return r, nil
}

// checkInside returns the check that load runs without fs permission:
// the file must lie inside progDir, the program's directory.
func (rt *Runtime) checkInside(path, progDir string) func(real string) error {
	if rt.allowed["fs"] {
		return nil
	}
	return func(real string) error {
		if progDir == "" {
			return fmt.Errorf("%s: the program has no directory, and %s", path, notAllowed("fs"))
		}
		dir, err := rt.files.resolved(progDir)
		if err != nil || !within(real, dir) {
			return fmt.Errorf("%s: it is outside the program's directory %s, and %s", path, progDir, notAllowed("fs"))
		}
		return nil
	}
}

// within reports whether the resolved path file lies under the resolved
// directory dir.
func within(file, dir string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolvePath is path made absolute with its symbolic links resolved; for
// a file that does not exist, those of its directory.
func resolvePath(path string) (string, error) {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return filepath.Abs(r)
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Abs(filepath.Join(r, filepath.Base(path)))
	}
	return filepath.Abs(path)
}

// isFile reports whether path names a regular file (symbolic links
// followed).
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
