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
// directory (see Runtime.loadInside); the check runs on the resolved
// path before the file is read, so a file outside never reaches the
// compiler, whose syntax errors would show its contents.

import (
	"errors"
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

// load compiles the file at path once per resolved path. If inside is
// not "", the file must lie in that directory (resolved: see resolved),
// which is checked before the file is read.
func (f *scriptFiles) load(path, inside string) (*Script, error) {
	s := f.cached(path)
	if s == nil {
		real, err := resolvePath(path)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
		if inside != "" && !within(real, inside) {
			return nil, errOutside
		}
		if s, err = f.compileOnce(path, real); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.byName[path] = s
		f.mu.Unlock()
	}
	if inside != "" && !within(s.real, inside) {
		return nil, errOutside
	}
	return s, nil
}

var errOutside = errors.New("outside")

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

// resolved returns dir absolute with its symbolic links resolved and a
// separator at the end (for within), remembering the answer: a program's
// directory is asked for often.
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
	r = strings.TrimSuffix(r, string(filepath.Separator)) + string(filepath.Separator)
	f.mu.Lock()
	f.realDir[dir] = r
	f.mu.Unlock()
	return r, nil
}

// loadInside loads the file at path for a program in progDir. Without fs
// permission the file must lie inside progDir (the program's directory),
// so that a sandboxed program can load its own scripts and modules but
// no other file, not even through a symbolic link.
func (rt *Runtime) loadInside(path, progDir string) (*Script, error) {
	if rt.allowed["fs"] {
		return rt.files.load(path, "")
	}
	if progDir == "" {
		return nil, fmt.Errorf("%s: the program has no directory, and %s", path, notAllowed("fs"))
	}
	dir, err := rt.files.resolved(progDir)
	if err == nil {
		var s *Script
		if s, err = rt.files.load(path, dir); err == nil {
			return s, nil
		}
	}
	if err == errOutside || dir == "" {
		return nil, fmt.Errorf("%s: it is outside the program's directory %s, and %s", path, progDir, notAllowed("fs"))
	}
	return nil, err
}

// within reports whether the resolved path file lies under dir, a
// resolved directory ending in a separator.
func within(file, dir string) bool {
	return strings.HasPrefix(file, dir)
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
