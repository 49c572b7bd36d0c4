package luaproc

// Script files, compiled once per Runtime.
//
// LoadFile, process.spawn_file and require all come here. A file is
// compiled at most once per version of it per Runtime, keyed by its
// resolved path (absolute, symbolic links followed) and its version (the
// file itself, its modification time and size, from one stat), so two
// names for one file share one Script; concurrent first loads of a file
// wait for one compile. A second map remembers the path as it was asked
// for, so that a process loading a file the Runtime has compiled makes no
// system call at all: no stat, no symlink walk. A load that asks for the
// file as it is now (fresh: LoadFile, and a process's require of a file it
// has loaded before, after package.loaded[name] = nil, as Lua reads the
// file again then) costs one stat, and compiles the file again if it
// changed. A failed compile is not kept: the next load tries again (and
// counts again).
//
// Without fs permission a program may load only files inside its own
// directory (see Runtime.loadInside); the check runs on the resolved
// path before the file is read, so a file outside never reaches the
// compiler, whose syntax errors would show its contents.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

type scriptFiles struct {
	mu      sync.Mutex
	byName  map[string]namedScript // path as asked for → its script
	byReal  map[string]*compileJob // resolved path → its compile
	realDir map[string]string      // directory → resolved (loadInside)
	absDir  map[string]string      // directory → absolute (mayTouch)

	// compiled counts compilations (LoadFile, spawn_file, require and
	// LoadString alike); written by any goroutine, read by Stats.
	compiled atomic.Int64
}

// namedScript is a script with the stat of the file it was compiled from.
type namedScript struct {
	s  *Script
	fi os.FileInfo
}

// compileJob is one file's compile; done closes when s or err is set.
type compileJob struct {
	done chan struct{}
	fi   os.FileInfo // the version compiled
	s    *Script
	err  error
}

// sameVersion reports whether a and b are stats of one version of one
// file: the same file (device and inode), modification time and size.
func sameVersion(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

func newScriptFiles() *scriptFiles {
	return &scriptFiles{byName: map[string]namedScript{}, byReal: map[string]*compileJob{},
		realDir: map[string]string{}, absDir: map[string]string{}}
}

// cached returns the script loaded last under this path, if any, with
// the stat of the file it was compiled from.
func (f *scriptFiles) cached(path string) (*Script, os.FileInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.byName[path]
	return c.s, c.fi
}

// load compiles the file at path once per resolved path and version. If
// inside is not "", the file must lie in that directory (resolved: see
// resolved), which is checked before the file is read. Unless fresh, a
// file loaded under this path before is taken as it was then.
func (f *scriptFiles) load(path, inside string, fresh bool) (*Script, error) {
	if !fresh {
		if s, _ := f.cached(path); s != nil {
			if inside != "" && !within(s.real, inside) {
				return nil, errOutside
			}
			return s, nil
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // as reading it says (CompileFile)
		}
		return nil, fmt.Errorf("cannot read script: %w", err)
	}
	s, sfi := f.cached(path)
	if !sameVersion(sfi, fi) {
		real, err := resolvePath(path)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
		if inside != "" && !within(real, inside) {
			return nil, errOutside
		}
		if s, err = f.compileOnce(path, real, fi); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.byName[path] = namedScript{s, fi}
		f.mu.Unlock()
	}
	if inside != "" && !within(s.real, inside) {
		return nil, errOutside
	}
	return s, nil
}

var errOutside = errors.New("outside")

// compileOnce compiles version fi of the file at path (resolved: real),
// once: a load of the same version waits for that compile, a load of
// another version replaces it.
func (f *scriptFiles) compileOnce(path, real string, fi os.FileInfo) (*Script, error) {
	f.mu.Lock()
	job := f.byReal[real]
	if job != nil && sameVersion(job.fi, fi) {
		f.mu.Unlock()
		<-job.done
		return job.s, job.err
	}
	job = &compileJob{done: make(chan struct{}), fi: fi}
	f.byReal[real] = job
	f.mu.Unlock()

	job.s, job.err = CompileFile(path)
	f.compiled.Add(1)
	if job.err == nil {
		job.s.real = real
	} else {
		f.mu.Lock()
		if f.byReal[real] == job {
			delete(f.byReal, real) // the next load tries again
		}
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

// absolute returns dir absolute and cleaned, with a separator at the end
// (for within), remembering the answer.
func (f *scriptFiles) absolute(dir string) (string, error) {
	f.mu.Lock()
	a, ok := f.absDir[dir]
	f.mu.Unlock()
	if ok {
		return a, nil
	}
	a, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	a = strings.TrimSuffix(a, string(filepath.Separator)) + string(filepath.Separator)
	f.mu.Lock()
	f.absDir[dir] = a
	f.mu.Unlock()
	return a, nil
}

// loadInside loads the file at path for a program in progDir. Without fs
// permission the file must lie inside progDir (the program's directory),
// so that a sandboxed program can load its own scripts and modules but
// no other file, not even through a symbolic link.
func (rt *Runtime) loadInside(path, progDir string, fresh bool) (*Script, error) {
	if rt.allowed["fs"] {
		return rt.files.load(path, "", fresh)
	}
	if !rt.mayTouch(path, progDir) {
		return nil, outsideOrNoDir(path, progDir)
	}
	dir, err := rt.files.resolved(progDir)
	if err == nil {
		var s *Script
		if s, err = rt.files.load(path, dir, fresh); err == nil {
			return s, nil
		}
	}
	if err == errOutside || dir == "" {
		return nil, outsideOrNoDir(path, progDir)
	}
	return nil, err
}

// outsideOrNoDir is the error of a file a program without fs may not load.
func outsideOrNoDir(path, progDir string) error {
	if progDir == "" {
		return fmt.Errorf("%s: the program has no directory, and %s", path, notAllowed("fs"))
	}
	return fmt.Errorf("%s: it is outside the program's directory %s, and %s", path, progDir, notAllowed("fs"))
}

// mayTouch reports whether a program in progDir may look at the file
// path at all — even to learn whether it exists: with fs, any; without,
// only one whose absolute, cleaned name lies in progDir and that stays
// there once the symbolic links on its way are followed (insideLinks). A
// sandboxed script that could stat any path could probe the whole file
// system, through a link to / in its own directory too.
func (rt *Runtime) mayTouch(path, progDir string) bool {
	if rt.allowed["fs"] {
		return true
	}
	rel, ok := rt.lexicallyInside(path, progDir)
	if !ok {
		return false
	}
	real, err := rt.files.resolved(progDir)
	return err == nil && insideLinks(real, rel)
}

// lexicallyInside returns path relative to progDir if its absolute,
// cleaned name lies in progDir (links not followed).
func (rt *Runtime) lexicallyInside(path, progDir string) (string, bool) {
	if progDir == "" {
		return "", false
	}
	dir, err1 := rt.files.absolute(progDir)
	abs, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil || !within(abs, dir) {
		return "", false
	}
	return strings.TrimPrefix(abs, dir), true
}

// maxLinks bounds the symbolic links insideLinks follows (Linux's 40).
const maxLinks = 40

// insideLinks reports whether rel (a path relative to root, a resolved
// directory ending in a separator) stays inside root when the symbolic
// links on its way are followed, component by component, without ever
// looking at (lstat) a name outside root: what the answer depends on is
// inside root, never whether some other path exists. A component that
// does not exist ends the walk (the file is not there, and the caller
// may say so).
func insideLinks(root, rel string) bool {
	sep := string(filepath.Separator)
	cur := strings.TrimSuffix(root, sep)
	comps := strings.Split(rel, sep)
	for links := 0; len(comps) > 0; {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if !within(next+sep, root) && !within(root, next+sep) {
			return false // outside root, and not one of its parents
		}
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			if err != nil {
				return within(next+sep, root)
			}
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return false
		}
		target, err := os.Readlink(next)
		if err != nil {
			return false
		}
		if filepath.IsAbs(target) {
			cur = sep
		}
		comps = append(strings.Split(target, sep), comps...)
	}
	return within(cur, root)
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
