package commands

// fs.stat, fs.mkdir, fs.remove, fs.rename and fs.append: the file-system
// operations besides reading and writing whole files, each a command on a
// goroutine holding a file slot, as fs.go's.

import (
	"context"
	"fmt"
	"os"

	"github.com/luarun/luarun/scheduler"
)

// fsStat: fs.stat(path) → {size=, mtime= (seconds since 1970, with
// fractions), is_dir=, mode= (the permission bits, 0644 as 420)}. A
// symbolic link is followed.
func (o *IO) fsStat(c scheduler.Call) error {
	path, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fsError("fs.stat", path, err)
		}
		return map[string]any{
			"size":   fi.Size(),
			"mtime":  float64(fi.ModTime().UnixNano()) / 1e9,
			"is_dir": fi.IsDir(),
			"mode":   int64(fi.Mode().Perm()),
		}, nil
	})
	return nil
}

// mkdirArgs reads fs.mkdir's path and its optional parents flag.
func mkdirArgs(args []any) (path string, parents bool, err error) {
	if path, err = argPath(args, 0); err != nil {
		return "", false, err
	}
	if len(args) > 1 && args[1] != nil {
		b, ok := args[1].(bool)
		if !ok {
			return "", false, fmt.Errorf("argument 2: boolean expected, got %s", typeName(args, 1))
		}
		parents = b
	}
	return path, parents, nil
}

// fsMkdir: fs.mkdir(path [, parents]) → true; with parents, the missing
// directories above it too, and an existing directory is no error.
func (o *IO) fsMkdir(c scheduler.Call) error {
	path, parents, err := mkdirArgs(c.Args)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		mkdir := os.Mkdir
		if parents {
			mkdir = os.MkdirAll
		}
		return fsDone("fs.mkdir", path, mkdir(path, 0o777)) // less the umask
	})
	return nil
}

// fsRemove: fs.remove(path) → true: a file, or an empty directory.
func (o *IO) fsRemove(c scheduler.Call) error {
	path, err := argPath(c.Args, 0)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		return fsDone("fs.remove", path, os.Remove(path))
	})
	return nil
}

// renameArgs reads fs.rename's two paths.
func renameArgs(args []any) (from, to string, err error) {
	if from, err = argPath(args, 0); err != nil {
		return "", "", err
	}
	to, err = argPath(args, 1)
	return from, to, err
}

// fsRename: fs.rename(from, to) → true (replacing to, as rename(2)).
func (o *IO) fsRename(c scheduler.Call) error {
	from, to, err := renameArgs(c.Args)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		return fsDone("fs.rename", from, os.Rename(from, to))
	})
	return nil
}

// fsAppend: fs.append(path, data) → true: data added at the end of the
// file, which is made (0666 less the umask) if it is not there. One
// write call per chunk, each checking the context.
func (o *IO) fsAppend(c scheduler.Call) error {
	path, data, err := writeArgs(c.Args)
	if err != nil {
		return err
	}
	o.fsOp(c, func(ctx context.Context) (any, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return nil, fsError("fs.append", path, err)
		}
		err = writeChunks(ctx, f, data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return fsDone("fs.append", path, err)
	})
	return nil
}
