package commands

// Open files: the streams behind fs.open's handles and fs.lines.
//
// file.open opens a file and answers a handle: a number that only the
// process that opened it may use. The file stays open until
// file.close, or until its process ends (IO.CloseFiles, which the Lua
// layer calls from the process's Close), so a process that forgets a
// handle leaks nothing beyond its life. Each operation runs on a
// goroutine holding a file slot, like fs.read's, and reads through a
// buffer that a write or a seek drops. file.lines answers the next
// lines of a file up to about 64 KB, so a generic for over a huge file
// holds one batch at a time: constant memory.
//
// These commands are the Lua layer's (builtin/fs.lua wraps them as
// handle methods); they are not a module of their own in Lua.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// linesBatch is about how many bytes of lines file.lines answers.
const linesBatch = 64 << 10

// openFile is one fs.open handle's file.
type openFile struct {
	mu    sync.Mutex // one operation at a time (a kill may close it meanwhile)
	owner scheduler.PID
	path  string
	f     *os.File
	r     *bufio.Reader // reads; nil after a write or a seek
}

// openFiles are an IO's open files by handle, and the handles of each
// process that has any.
type openFiles struct {
	mu      sync.Mutex
	next    int64
	byID    map[int64]*openFile
	byOwner map[scheduler.PID]map[int64]bool
}

// fileModes are io.open's modes ("b" is ignored).
var fileModes = map[string]int{
	"r": os.O_RDONLY, "w": os.O_WRONLY | os.O_CREATE | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREATE | os.O_APPEND,
	"r+": os.O_RDWR, "w+": os.O_RDWR | os.O_CREATE | os.O_TRUNC, "a+": os.O_RDWR | os.O_CREATE | os.O_APPEND,
}

func openArgs(args []any) (path string, flag int, err error) {
	if path, err = argPath(args, 0); err != nil {
		return "", 0, err
	}
	mode := "r"
	if len(args) > 1 && args[1] != nil {
		if mode, err = argString(args, 1); err != nil {
			return "", 0, err
		}
	}
	flag, ok := fileModes[strings.ReplaceAll(mode, "b", "")]
	if !ok {
		return "", 0, fmt.Errorf("argument 2: invalid mode %q", mode)
	}
	return path, flag, nil
}

// fileOpen: file.open(path [, mode]) → a handle.
func (o *IO) fileOpen(c scheduler.Call) error {
	path, flag, err := openArgs(c.Args)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		f, err := os.OpenFile(path, flag, 0o666)
		if err != nil {
			return nil, fsError("fs.open", path, err)
		}
		o.files.mu.Lock()
		defer o.files.mu.Unlock()
		if o.files.byID == nil {
			o.files.byID, o.files.byOwner = map[int64]*openFile{}, map[scheduler.PID]map[int64]bool{}
		}
		o.files.next++
		id := o.files.next
		o.files.byID[id] = &openFile{owner: c.PID, path: path, f: f}
		if o.files.byOwner[c.PID] == nil {
			o.files.byOwner[c.PID] = map[int64]bool{}
		}
		o.files.byOwner[c.PID][id] = true
		return id, nil
	})
	return nil
}

// handle returns the open file of args[0] if c's process owns it.
func (o *IO) handle(c scheduler.Call) (*openFile, error) {
	var id int64
	ok := len(c.Args) > 0
	if ok {
		id, ok = c.Args[0].(int64)
	}
	if !ok {
		return nil, errors.New("argument 1: a file handle expected")
	}
	o.files.mu.Lock()
	h := o.files.byID[id]
	o.files.mu.Unlock()
	if h == nil || h.owner != c.PID {
		return nil, errors.New("attempt to use a closed file")
	}
	return h, nil
}

// fileOp runs op on c's open file (locked), on a file slot.
func (o *IO) fileOp(c scheduler.Call, op func(ctx context.Context, h *openFile) (any, error)) error {
	h, err := o.handle(c)
	if err != nil {
		return err
	}
	o.fsOp(c, func(ctx context.Context) (any, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.f == nil {
			return nil, errors.New("attempt to use a closed file")
		}
		return op(ctx, h)
	})
	return nil
}

// reader is h's read buffer, made on first use.
func (h *openFile) reader() *bufio.Reader {
	if h.r == nil {
		h.r = bufio.NewReaderSize(h.f, linesBatch)
	}
	return h.r
}

// fileRead: file.read(h, formats...) → one value per format, as Lua's
// file:read: "l"/"*l" a line without its end, "L"/"*L" with it, "a"/"*a"
// the rest, "n"/"*n" a number, a count of bytes; nil (and the rest
// skipped) at the end of the file.
func (o *IO) fileRead(c scheduler.Call) error {
	formats := c.Args[min(1, len(c.Args)):]
	if len(formats) == 0 {
		formats = []any{"l"}
	}
	return o.fileOp(c, func(ctx context.Context, h *openFile) (any, error) {
		out := make(payload.Payloads, 0, len(formats))
		r := h.reader()
		for i, f := range formats {
			v, err := readFormat(r, f, i+2, o.maxData)
			if err != nil {
				return nil, fsError("fs.read", h.path, err)
			}
			out = append(out, v)
			if v == nil {
				break
			}
		}
		return out, nil
	})
}

// readFormat reads one value of format f (argument n) from r.
func readFormat(r *bufio.Reader, f any, n int, limit int64) (any, error) {
	if count, ok := f.(int64); ok {
		buf := make([]byte, count)
		got, err := io.ReadFull(r, buf)
		if got == 0 && count > 0 && err != nil {
			return nil, nil
		}
		return string(buf[:got]), nil
	}
	s, _ := f.(string)
	switch strings.TrimPrefix(s, "*") {
	case "l", "L":
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			return nil, nil
		}
		if strings.TrimPrefix(s, "*") == "l" {
			line = strings.TrimSuffix(line, "\n")
		}
		return line, nil
	case "a":
		b, err := io.ReadAll(io.LimitReader(r, limit+1))
		if int64(len(b)) > limit {
			return nil, &tooLargeError{what: "file", limit: limit}
		}
		return string(b), err
	case "n":
		var x float64
		if _, err := fmt.Fscan(r, &x); err != nil {
			return nil, nil
		}
		if i := int64(x); float64(i) == x {
			return i, nil
		}
		return x, nil
	}
	return nil, fmt.Errorf("argument %d: invalid format %v", n, f)
}

// fileLines: file.lines(h [, close]) → Lines: the next lines (without
// their ends), about linesBatch bytes of them, none at the end of the
// file (where, with close, the file is closed).
func (o *IO) fileLines(c scheduler.Call) error {
	closeAtEnd := len(c.Args) > 1 && c.Args[1] == true
	return o.fileOp(c, func(ctx context.Context, h *openFile) (any, error) {
		r := h.reader()
		var lines []string
		size, noEnd := 0, false
		for size < linesBatch {
			line, err := r.ReadString('\n')
			if line != "" {
				lines = append(lines, strings.TrimSuffix(line, "\n"))
				size += len(line)
				noEnd = !strings.HasSuffix(line, "\n")
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fsError("fs.lines", h.path, err)
			}
		}
		if lines == nil && closeAtEnd {
			h.closeLocked()
			o.forget(c.Args[0].(int64), h)
		}
		return Lines{Handle: c.Args[0].(int64), Lines: lines, NoEnd: noEnd}, nil
	})
}

// Lines is file.lines's answer: the next lines of handle Handle (none at
// the end of the file). The Lua layer hands them out one per call of its
// iterator, from a buffer of the process's: only a call that finds the
// buffer empty is a command.
type Lines struct {
	Handle int64
	Lines  []string
	// NoEnd: the last line is the file's last and had no line end (what
	// a reader that gives lines back must know to seek back over them).
	NoEnd bool
}

// fileWrite: file.write(h, data...) → true.
func (o *IO) fileWrite(c scheduler.Call) error {
	data := make([]string, 0, len(c.Args))
	for i := 1; i < len(c.Args); i++ {
		s, err := argString(c.Args, i)
		if err != nil {
			return err
		}
		data = append(data, s)
	}
	return o.fileOp(c, func(ctx context.Context, h *openFile) (any, error) {
		if err := h.unread(); err != nil {
			return nil, fsError("fs.write", h.path, err)
		}
		if err := writeChunks(ctx, h.f, strings.Join(data, "")); err != nil {
			return nil, fsError("fs.write", h.path, err)
		}
		return true, nil
	})
}

// unread drops the read buffer, moving the file back to where the reads
// had got to (the buffer had read ahead).
func (h *openFile) unread() error {
	if h.r == nil {
		return nil
	}
	ahead := h.r.Buffered()
	h.r = nil
	if ahead > 0 {
		_, err := h.f.Seek(int64(-ahead), io.SeekCurrent)
		return err
	}
	return nil
}

// fileSeek: file.seek(h [, whence [, offset]]) → the position, as
// file:seek ("set", "cur" (default), "end").
func (o *IO) fileSeek(c scheduler.Call) error {
	whence := io.SeekCurrent
	if len(c.Args) > 1 && c.Args[1] != nil {
		w, _ := c.Args[1].(string)
		switch w {
		case "set":
			whence = io.SeekStart
		case "cur":
		case "end":
			whence = io.SeekEnd
		default:
			return fmt.Errorf("argument 2: invalid option %q", w)
		}
	}
	var offset int64
	if len(c.Args) > 2 && c.Args[2] != nil {
		n, ok := c.Args[2].(int64)
		if !ok {
			return errors.New("argument 3: an integer expected")
		}
		offset = n
	}
	return o.fileOp(c, func(ctx context.Context, h *openFile) (any, error) {
		if err := h.unread(); err != nil {
			return nil, fsError("fs.seek", h.path, err)
		}
		pos, err := h.f.Seek(offset, whence)
		if err != nil {
			return nil, fsError("fs.seek", h.path, err)
		}
		return pos, nil
	})
}

// fileClose: file.close(h) → true.
func (o *IO) fileClose(c scheduler.Call) error {
	h, err := o.handle(c)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) {
		return true, o.closeFile(c.Args[0].(int64), h)
	})
	return nil
}

func (o *IO) closeFile(id int64, h *openFile) error {
	o.forget(id, h)
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closeLocked()
}

// forget removes handle id from the open files.
func (o *IO) forget(id int64, h *openFile) {
	o.files.mu.Lock()
	defer o.files.mu.Unlock()
	delete(o.files.byID, id)
	if mine := o.files.byOwner[h.owner]; mine != nil {
		delete(mine, id)
		if len(mine) == 0 {
			delete(o.files.byOwner, h.owner)
		}
	}
}

// closeLocked closes h's file (h.mu held).
func (h *openFile) closeLocked() error {
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f, h.r = nil, nil
	if err != nil {
		return fsError("fs.close", h.path, err)
	}
	return nil
}

// CloseFiles closes the files process pid left open (at its end).
func (o *IO) CloseFiles(pid scheduler.PID) {
	o.files.mu.Lock()
	mine := o.files.byOwner[pid]
	handles := make(map[int64]*openFile, len(mine))
	for id := range mine {
		handles[id] = o.files.byID[id]
	}
	o.files.mu.Unlock()
	for id, h := range handles {
		o.closeFile(id, h)
	}
}

// OpenFiles is how many files fs.open handles hold open.
func (o *IO) OpenFiles() int {
	o.files.mu.Lock()
	defer o.files.mu.Unlock()
	return len(o.files.byID)
}
