package commands

// fs.read, fs.write and fs.list: each call runs on a goroutine of its own,
// after taking one of the IO's file slots (so that thousands of processes
// reading at once block a bounded number of OS threads). File system calls
// cannot be interrupted: a process killed during one has its completion
// dropped. fs.write replaces the file atomically (temp file in the same
// directory, fsync, rename), so a reader sees the old contents or the new,
// never a mix, and a crash leaves no half-written file.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/luarun/luarun/scheduler"
)

// fsRead: fs.read(path) → the file's contents (a string, any bytes).
func (o *IO) fsRead(c scheduler.Call) error {
	path, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	o.fsOp(c, func() (any, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fsError("fs.read", path, err)
		}
		return string(b), nil
	})
	return nil
}

// fsWrite: fs.write(path, data) → true.
func (o *IO) fsWrite(c scheduler.Call) error {
	path, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	data, err := argString(c.Args, 1)
	if err != nil {
		return err
	}
	o.fsOp(c, func() (any, error) {
		if err := writeAtomic(path, data); err != nil {
			return nil, fsError("fs.write", path, err)
		}
		return true, nil
	})
	return nil
}

// fsList: fs.list(dir) → the entry names, sorted.
func (o *IO) fsList(c scheduler.Call) error {
	dir, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	o.fsOp(c, func() (any, error) {
		entries, err := os.ReadDir(dir) // sorted by name
		if err != nil {
			return nil, fsError("fs.list", dir, err)
		}
		names := make([]any, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		return names, nil
	})
	return nil
}

// fsOp runs op on a goroutine holding a file slot and completes c with
// its result.
func (o *IO) fsOp(c scheduler.Call, op func() (any, error)) {
	o.goroutines.Go(func() {
		select {
		case o.fsSlots <- struct{}{}:
		case <-c.Ctx.Done():
			c.Fail(context.Cause(c.Ctx))
			return
		}
		v, err := op()
		<-o.fsSlots
		if err != nil {
			c.Fail(err)
			return
		}
		c.Complete(v)
	})
}

// writeAtomic replaces the file at path (the file a symbolic link points
// to, for a link) with data, keeping an existing file's permissions.
func writeAtomic(path, data string) (err error) {
	target := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(path); err == nil {
			target = t
		}
	}
	mode := fs.FileMode(0o644)
	switch fi, err := os.Stat(target); {
	case err == nil && fi.IsDir():
		return syscall.EISDIR
	case err == nil && !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case err == nil:
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // a second Close is harmless
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.WriteString(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, target); err != nil {
		return err
	}
	// Make the rename itself durable; a file system that cannot sync a
	// directory still has the new file.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// argPath reads Args[i] as a non-empty path.
func argPath(args []any, i int) (string, error) {
	p, err := argString(args, i)
	if err == nil && p == "" {
		err = fmt.Errorf("argument %d: empty path", i+1)
	}
	return p, err
}

// fsError is "cmd path: reason", without Go's wrappers (see sysError).
func fsError(cmd, path string, err error) error {
	return fmt.Errorf("%s %s: %w", cmd, path, sysError(err))
}

// sysError peels Go's wrappers off a system error: they repeat the
// operation and a path (maybe a temp file's) that the message says better.
func sysError(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &se):
		return se.Err
	}
	return err
}
