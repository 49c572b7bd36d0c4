package commands

// fs.read, fs.write and fs.list: each call runs on a goroutine of its own,
// after taking one of the IO's file slots (so that thousands of processes
// reading at once block a bounded number of OS threads).
//
// Only regular files are read: a path is opened non-blocking (opening a
// FIFO would otherwise wait for a writer, holding the slot for good) and
// anything else (a FIFO, a device such as /dev/zero, a socket) is refused
// after an fstat. A file is read in chunks that check the call's context,
// so a kill stops a big read, and at most the IO's cap (256 MiB) is read:
// a larger file (by its size, or by what a growing file turns out to
// hold) fails the call.
//
// fs.write replaces the file atomically (temp file in the same directory,
// fsync, rename), so a reader sees the old contents or the new, never a
// mix, and a crash leaves no half-written file. The temp file is created
// with mode 0666 less the umask, like any new file; replacing a file keeps
// its mode. Data is written in chunks that check the context: a kill (or
// the runtime's shutdown, which waits for the call) removes the temp file
// and leaves the old contents. A temp file that a killed luarun (kill -9)
// left is removed by a later write to its directory (fstemp.go).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/luarun/luarun/scheduler"
)

// fsRead: fs.read(path) → the file's contents (a string, any bytes).
func (o *IO) fsRead(c scheduler.Call) error {
	path, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	o.fsOp(c, func(ctx context.Context) (any, error) {
		b, err := readFile(ctx, path, o.maxData)
		if err != nil {
			return nil, fsError("fs.read", path, err)
		}
		return ownedString(b), nil
	})
	return nil
}

// fsWrite: fs.write(path, data) → true.
func (o *IO) fsWrite(c scheduler.Call) error {
	path, data, err := writeArgs(c.Args)
	if err != nil {
		return err
	}
	o.fsOp(c, func(ctx context.Context) (any, error) {
		return fsDone("fs.write", path, writeAtomic(ctx, path, data))
	})
	return nil
}

// writeArgs reads fs.write's path and data.
func writeArgs(args []any) (path, data string, err error) {
	if path, err = argPath(args, 0); err != nil {
		return "", "", err
	}
	data, err = argString(args, 1)
	return path, data, err
}

// fsList: fs.list(dir) → the entry names, sorted.
func (o *IO) fsList(c scheduler.Call) error {
	dir, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		names, err := listDir(dir)
		if err != nil {
			return nil, fsError("fs.list", dir, err)
		}
		return names, nil
	})
	return nil
}

// fsOp runs op on a goroutine holding a file slot and completes c with
// its result.
func (o *IO) fsOp(c scheduler.Call, op func(context.Context) (any, error)) {
	o.startCall(c, func() {
		select {
		case o.fsSlots <- struct{}{}:
		case <-c.Ctx.Done():
			c.Fail(context.Cause(c.Ctx))
			return
		}
		v, err := o.runSlot(c.Ctx, op)
		if err != nil {
			c.Fail(err)
			return
		}
		c.Complete(v)
	})
}

// runSlot runs op, which holds a file slot, and gives the slot back,
// also if op panics.
func (o *IO) runSlot(ctx context.Context, op func(context.Context) (any, error)) (any, error) {
	defer func() { <-o.fsSlots }()
	return op(ctx)
}

// errNotRegular refuses a FIFO, a device, a socket...
var errNotRegular = errors.New("not a regular file")

// openNonblock opens path for reading without waiting (a FIFO's open
// would wait for a writer) and stats it.
func openNonblock(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblockFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readFile reads the regular file at path, at most limit bytes.
func readFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, fi, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case fi.IsDir():
		return nil, syscall.EISDIR
	case !fi.Mode().IsRegular():
		return nil, errNotRegular
	case fi.Size() > limit:
		return nil, tooLargeError{"file", limit}
	}
	return readCapped(ctx, f, fi.Size(), limit, "file")
}

// listDir lists the directory at path, sorted.
func listDir(path string) ([]any, error) {
	f, fi, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, syscall.ENOTDIR
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	slices.Sort(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out, nil
}

// writeAtomic replaces the file at path (the file a symbolic link points
// to, for a link) with data, keeping an existing file's permissions.
func writeAtomic(ctx context.Context, path, data string) error {
	target, mode, exists, err := writeTarget(path)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	sweepTemps(dir)
	f, err := createTemp(dir, base)
	if err != nil {
		return err
	}
	if err := fillTemp(ctx, f, data, mode, exists); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), target); err != nil {
		os.Remove(f.Name())
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

// writeTarget resolves path (through a symbolic link) to the file to
// replace, and tells whether it exists and with which permissions.
func writeTarget(path string) (target string, mode fs.FileMode, exists bool, err error) {
	target = path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := filepath.EvalSymlinks(path); err == nil {
			target = t
		}
	}
	switch fi, err := os.Stat(target); {
	case err == nil && fi.IsDir():
		return "", 0, false, syscall.EISDIR
	case err == nil && !fi.Mode().IsRegular():
		return "", 0, false, errNotRegular
	case err == nil:
		return target, fi.Mode().Perm(), true, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", 0, false, err
	}
	return target, 0, false, nil
}

// fillTemp gives the temp file f the replaced file's mode (if it exists)
// and data, in chunks that stop once ctx is done, and syncs and closes it.
func fillTemp(ctx context.Context, f *os.File, data string, mode fs.FileMode, exists bool) error {
	if exists {
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if err := writeChunks(ctx, f, data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if ctx.Err() != nil { // killed during the sync: keep the old contents
		return context.Cause(ctx)
	}
	return f.Close()
}

// writeChunks writes data to f in chunks, stopping once ctx is done.
func writeChunks(ctx context.Context, f *os.File, data string) error {
	for len(data) > 0 {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		n := min(len(data), ioChunk)
		if _, err := f.WriteString(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// fsError is "cmd path: reason", without Go's wrappers (see sysError).
func fsError(cmd, path string, err error) error {
	return fmt.Errorf("%s %s: %w", cmd, path, sysError(err))
}

// fsDone is the answer of a file operation that returns true: true, or
// err as command cmd's on path.
func fsDone(cmd, path string, err error) (any, error) {
	if err != nil {
		return nil, fsError(cmd, path, err)
	}
	return true, nil
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
