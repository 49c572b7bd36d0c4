package commands

// Open files: the streams behind fs.open's handles and fs.lines.
//
// fs.open opens a regular file (a FIFO, a device or a socket is refused,
// as fs.read refuses them: a read of one could wait for ever, holding a
// file slot) and answers a handle: a number that only the process that
// opened it may use. The file stays open until file:close, or until its
// process ends (IO.CloseFiles, which the Lua layer calls when a process
// that asked for a file ends). If the process has ended by the time the
// open completes, the file is closed at once.
//
// Each operation runs on a goroutine holding a file slot and the file's
// own mutex, reads through a buffer that a write or a seek drops, checks
// the call's context between chunks, and is capped at the IO's limit
// (256 MiB): a line, a count or "a" longer than that fails the call, so a
// line reader holds at most one batch of lines plus one line. file:lines
// answers the next lines up to about 64 KB (a Lines), never failing: an
// error comes in Lines.Err, for the Lua layer to raise in the loop.
//
// While the Lua side works through a batch, the next ones are read: after
// a batch of lines is handed out and the end of the file was not reached,
// an IO goroutine (if a file slot is free; it takes the file's mutex like
// any operation) reads up to maxPrefetched batches into openFile.ready.
// The Lua side takes a ready batch without a yield (TakeLines), and
// file:lines answers one at once. Ready batches start where the last
// batch handed out ended; every other operation counts their bytes as
// read ahead and seeks back over them (unread), so they never show. A
// prefetch that fails seeks back and leaves its error to the next call's
// own read.
//
// The handle commands take the handle's read-ahead as their second
// argument: the bytes of lines the Lua iterator had been given and not
// handed out, which the operation first seeks back over, so that a read,
// write or seek starts where the loop stopped.
//
// Lock order: openFile.mu, then openFiles.mu (never the other way).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// linesBatch is about how many bytes of lines file:lines answers.
const linesBatch = 64 << 10

// errClosedFile is the use of a handle after its close.
var errClosedFile = errors.New("attempt to use a closed file")

// openFile is one fs.open handle's file.
type openFile struct {
	owner scheduler.PID // never changes
	path  string        // never changes
	mu    sync.Mutex    // one operation at a time; guards f and r
	f     *os.File      // nil once closed
	r     *bufio.Reader // reads; nil after a write or a seek
	// readyMu guards ready and prefetching (taken after mu, never the
	// other way): TakeLines takes a ready batch without waiting for mu.
	readyMu sync.Mutex
	// ready: batches of lines read after the last one handed out, in
	// order, at most maxPrefetched.
	ready []*linesRead
	// prefetching: a prefetch goroutine is running for this file.
	prefetching bool
}

// maxPrefetched is how many batches of lines a file reads ahead.
const maxPrefetched = 2

// linesRead is a batch of lines read from a file.
type linesRead struct {
	lines []string // without their ends
	noEnd bool     // the last line had no end
	bytes int64    // what they took of the file, ends included
	eof   bool     // the batch stopped at the end of the file
}

// openFiles are an IO's open files by handle, and the handles of each
// process that has any (under mu).
type openFiles struct {
	mu      sync.Mutex
	next    int64
	byID    map[int64]*openFile
	byOwner map[scheduler.PID][]int64
}

// Lines is file:lines's answer: the next lines of handle Handle, none at
// the end of the file, or Err. The Lua layer hands the lines out one per
// call of its iterator, from a buffer of the process's.
type Lines struct {
	Handle int64
	Lines  []string
	// NoEnd: the last line is the file's last and had no line end (what
	// the Lua layer must know to seek back over lines it gives back).
	NoEnd bool
	Err   string
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
	mode, err := optArgString(args, 1, "r")
	if err != nil {
		return "", 0, err
	}
	flag, ok := fileModes[strings.ReplaceAll(mode, "b", "")]
	if !ok {
		return "", 0, fmt.Errorf("argument 2: invalid mode %q", mode)
	}
	return path, flag, nil
}

// fileOpen: fs.open(path [, mode]) → a handle.
func (o *IO) fileOpen(c scheduler.Call) error {
	path, flag, err := openArgs(c.Args)
	if err != nil {
		return err
	}
	o.startCall(c, func() {
		if !o.takeSlot(c) {
			return
		}
		h, err := openRegular(path, flag)
		<-o.fsSlots
		if err != nil {
			c.Fail(fsError("fs.open", path, err))
			return
		}
		id := o.files.add(c.PID, path, h)
		if !c.Complete(id) { // the process has ended: nobody will close it
			o.closeFile(id)
		}
	})
	return nil
}

// openRegular opens path with flag without waiting (a FIFO's open waits
// for its other end) and refuses what is not a regular file.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|openNonblockFlags, 0o666)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case fi.IsDir():
		err = syscall.EISDIR
	case !fi.Mode().IsRegular():
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// add records an open file of owner and returns its handle.
func (fs *openFiles) add(owner scheduler.PID, path string, f *os.File) int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.byID == nil {
		fs.byID, fs.byOwner = map[int64]*openFile{}, map[scheduler.PID][]int64{}
	}
	fs.next++
	fs.byID[fs.next] = &openFile{owner: owner, path: path, f: f}
	fs.byOwner[owner] = append(fs.byOwner[owner], fs.next)
	return fs.next
}

// get returns the open file of handle id, or nil.
func (fs *openFiles) get(id int64) *openFile {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.byID[id]
}

// takeSlot takes a file slot for c, or fails c when its context ends
// first.
func (o *IO) takeSlot(c scheduler.Call) bool {
	select {
	case o.fsSlots <- struct{}{}:
		return true
	case <-c.Ctx.Done():
		c.Fail(context.Cause(c.Ctx))
		return false
	}
}

// handle reads args[0] as a handle of c's process, and args[1] as the
// bytes of read-ahead to give back.
func (o *IO) handle(c scheduler.Call) (int64, *openFile, int64, error) {
	id, ok := argInt(c.Args, 0)
	back, ok2 := argInt(c.Args, 1)
	if !ok || !ok2 {
		return 0, nil, 0, errors.New("argument 1: a file expected")
	}
	h := o.files.get(id)
	if h == nil || h.owner != c.PID {
		return 0, nil, 0, errClosedFile
	}
	return id, h, back, nil
}

// argInt reads args[i] as an integer.
func argInt(args []any, i int) (int64, bool) {
	if i >= len(args) {
		return 0, false
	}
	n, ok := args[i].(int64)
	return n, ok
}

// fileOp runs op on c's open file (locked, after giving back the
// read-ahead), on a file slot. name is the method for messages.
func (o *IO) fileOp(c scheduler.Call, name string, op func(ctx context.Context, h *openFile) (any, error)) error {
	_, h, back, err := o.handle(c)
	if err != nil {
		return err
	}
	o.fsOp(c, func(ctx context.Context) (any, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.f == nil {
			return nil, fmt.Errorf("%s: %w", name, errClosedFile)
		}
		if err := h.unread(back); err != nil {
			return nil, fsError(name, h.path, err)
		}
		v, err := op(ctx, h)
		if err != nil {
			return nil, fsError(name, h.path, err)
		}
		return v, nil
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

// unread drops the read buffer, moving the file back to where the reads
// had got to (the buffer had read ahead), and back bytes more (what the
// Lua iterator gives back).
func (h *openFile) unread(back int64) error {
	ahead := h.dropReady()
	if h.r != nil {
		ahead += int64(h.r.Buffered())
		h.r = nil
	}
	if ahead+back > 0 {
		_, err := h.f.Seek(-(ahead + back), io.SeekCurrent)
		return err
	}
	return nil
}

// readFormats checks file:read's formats (arguments 3 on).
func readFormats(args []any) error {
	for i := 2; i < len(args); i++ {
		switch f := args[i].(type) {
		case int64:
			if f < 0 {
				return fmt.Errorf("argument %d: a count must not be negative", i-1)
			}
			continue
		case string:
			switch strings.TrimPrefix(f, "*") {
			case "l", "L", "a", "n":
				continue
			}
		}
		return fmt.Errorf("argument %d: invalid format", i-1)
	}
	return nil
}

// fileRead: file:read(h, back, formats...) → one value per format, as
// Lua's file:read: "l"/"*l" a line without its end, "L"/"*L" with it,
// "a"/"*a" the rest, "n"/"*n" a number, a count of bytes; nil (and the
// rest skipped) at the end of the file.
func (o *IO) fileRead(c scheduler.Call) error {
	if err := readFormats(c.Args); err != nil {
		return err
	}
	formats := c.Args[min(2, len(c.Args)):]
	if len(formats) == 0 {
		formats = []any{"l"}
	}
	return o.fileOp(c, "file:read", func(ctx context.Context, h *openFile) (any, error) {
		out := make([]any, 0, len(formats))
		for _, f := range formats {
			v, err := readFormat(ctx, h.reader(), f, o.maxData)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			if v == nil {
				break
			}
		}
		return payload.Payloads(out), nil
	})
}

// readFormat reads one value of format f (checked by readFormats).
func readFormat(ctx context.Context, r *bufio.Reader, f any, limit int64) (any, error) {
	if count, ok := f.(int64); ok {
		if count > limit {
			return nil, tooLargeError{"read", limit}
		}
		if _, err := r.Peek(1); err == io.EOF {
			return nil, nil // at the end: nil, even for a count of 0
		}
		b, err := readCapped(ctx, io.LimitReader(r, count), 0, limit, "read")
		return ownedString(b), err
	}
	switch strings.TrimPrefix(f.(string), "*") {
	case "l", "L":
		line, err := readLine(r, limit)
		if err != nil || line == "" {
			return nil, err
		}
		if strings.TrimPrefix(f.(string), "*") == "l" {
			line = strings.TrimSuffix(line, "\n")
		}
		return line, nil
	case "a":
		b, err := readCapped(ctx, r, 0, limit, "file")
		return ownedString(b), err
	default: // "n"
		var x float64
		if _, err := fmt.Fscan(r, &x); err != nil {
			return nil, nil
		}
		if i := int64(x); float64(i) == x {
			return i, nil
		}
		return x, nil
	}
}

// readLine reads a line with its end ("" at the end of the file), at
// most limit bytes.
func readLine(r *bufio.Reader, limit int64) (string, error) {
	chunk, err := r.ReadSlice('\n')
	if err == nil && int64(len(chunk)) <= limit { // the common case: one copy
		return string(chunk), nil
	}
	line := chunk
	if err == bufio.ErrBufferFull {
		line = append([]byte(nil), chunk...) // the next ReadSlice overwrites chunk
	}
	for err == bufio.ErrBufferFull {
		chunk, err = r.ReadSlice('\n')
		if int64(len(line)+len(chunk)) > limit {
			return "", tooLargeError{"line", limit}
		}
		line = append(line, chunk...)
	}
	if int64(len(line)) > limit {
		return "", tooLargeError{"line", limit}
	}
	if err == io.EOF {
		err = nil
	}
	return string(line), err
}

// fileLines: file:lines(h, back [, close]) → Lines: the next lines
// (without their ends), about linesBatch bytes of them, none at the end
// of the file (where, with close, the file is closed). It does not fail:
// an error is Lines.Err, which the Lua layer raises in the loop.
func (o *IO) fileLines(c scheduler.Call) error {
	id, _ := argInt(c.Args, 0)
	closeAtEnd := len(c.Args) > 2 && c.Args[2] == true
	failed := func(err error) { c.Complete(Lines{Handle: id, Err: err.Error()}) }
	if _, _, _, err := o.handle(c); err != nil {
		failed(fmt.Errorf("file:lines: %w", err))
		return nil
	}
	o.startCall(c, func() {
		v, err := o.readLines(c, id, closeAtEnd)
		if err != nil {
			failed(err)
			return
		}
		c.Complete(v)
	})
	return nil
}

// readLines is fileLines's work, on a file slot: the first ready batch
// if there is one, else a batch read now; then the next are prefetched.
func (o *IO) readLines(c scheduler.Call, id int64, closeAtEnd bool) (Lines, error) {
	if !o.takeSlot(c) {
		return Lines{}, context.Cause(c.Ctx)
	}
	defer func() { <-o.fsSlots }()
	_, h, back, _ := o.handle(c)
	if h == nil {
		return Lines{}, fmt.Errorf("file:lines: %w", errClosedFile)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.f == nil {
		return Lines{}, fmt.Errorf("file:lines: %w", errClosedFile)
	}
	var b *linesRead
	if back == 0 {
		b = h.takeReady(false)
	}
	if b == nil {
		if err := h.unread(back); err != nil {
			return Lines{}, fsError("file:lines", h.path, err)
		}
		if c.Ctx.Err() != nil { // a batch is short: checked once
			return Lines{}, context.Cause(c.Ctx)
		}
		var err error
		if b, err = h.readBatch(o.maxData); err != nil {
			return Lines{}, fsError("file:lines", h.path, err)
		}
	}
	if b.lines == nil && closeAtEnd {
		o.files.forget(id)
		err := h.closeLocked()
		if err != nil {
			return Lines{}, fsError("file:lines", h.path, err)
		}
	}
	if !b.eof {
		o.prefetch(h)
	}
	return Lines{Handle: id, Lines: b.lines, NoEnd: b.noEnd}, nil
}

// TakeLines answers file:lines for handle id of process pid at once when
// a batch of its lines is ready (not the end of the file): then the
// caller needs no yield, and more batches are prefetched. ok is false
// when none is ready; the caller then yields file:lines. It never waits
// for the file.
func (o *IO) TakeLines(pid scheduler.PID, id int64) (b Lines, ok bool) {
	h := o.files.get(id)
	if h == nil || h.owner != pid {
		return Lines{}, false
	}
	r := h.takeReady(true)
	if r == nil {
		return Lines{}, false
	}
	if !r.eof {
		o.prefetch(h)
	}
	return Lines{Handle: id, Lines: r.lines, NoEnd: r.noEnd}, true
}

// takeReady takes h's first ready batch, or nil; with lines, only a
// batch that has lines (the end of the file is left to file:lines, which
// may close the file there).
func (h *openFile) takeReady(lines bool) *linesRead {
	h.readyMu.Lock()
	defer h.readyMu.Unlock()
	if len(h.ready) == 0 || lines && len(h.ready[0].lines) == 0 {
		return nil
	}
	b := h.ready[0]
	h.ready = h.ready[1:]
	return b
}

// dropReady forgets h's ready batches and returns how many bytes of the
// file they took.
func (h *openFile) dropReady() int64 {
	h.readyMu.Lock()
	defer h.readyMu.Unlock()
	n := int64(0)
	for _, b := range h.ready {
		n += b.bytes
	}
	h.ready = nil
	return n
}

// readBatch reads lines from h's position up to about linesBatch bytes
// (h.mu held).
func (h *openFile) readBatch(limit int64) (*linesRead, error) {
	b := &linesRead{}
	r := h.reader()
	for b.bytes < linesBatch {
		line, err := readLine(r, limit)
		if err != nil {
			return nil, err
		}
		if line == "" {
			b.eof = true
			break
		}
		b.lines = append(b.lines, strings.TrimSuffix(line, "\n"))
		b.noEnd = !strings.HasSuffix(line, "\n")
		b.bytes += int64(len(line))
	}
	return b, nil
}

// prefetch starts reading h's next batches on an IO goroutine, unless one
// is at it, enough are ready, or no file slot is free (a prefetch never
// waits for one).
func (o *IO) prefetch(h *openFile) {
	h.readyMu.Lock()
	if h.prefetching || len(h.ready) >= maxPrefetched {
		h.readyMu.Unlock()
		return
	}
	h.prefetching = true
	h.readyMu.Unlock()
	select {
	case o.fsSlots <- struct{}{}:
	default:
		h.setPrefetching(false)
		return
	}
	o.start(func() {
		defer func() { <-o.fsSlots }()
		defer h.setPrefetching(false)
		h.mu.Lock()
		defer h.mu.Unlock()
		for h.f != nil && h.prefetchOne(o.maxData) {
		}
	})
}

// setPrefetching sets h.prefetching.
func (h *openFile) setPrefetching(on bool) {
	h.readyMu.Lock()
	h.prefetching = on
	h.readyMu.Unlock()
}

// prefetchOne reads one more batch into h.ready (h.mu held) and reports
// whether another may follow.
func (h *openFile) prefetchOne(limit int64) bool {
	h.readyMu.Lock()
	n := len(h.ready)
	done := n >= maxPrefetched || n > 0 && h.ready[n-1].eof
	h.readyMu.Unlock()
	if done {
		return false
	}
	// Where the batch starts, to go back to if it fails: the file's
	// offset less what the buffer holds.
	start, err := h.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return false
	}
	if h.r != nil {
		start -= int64(h.r.Buffered())
	}
	b, err := h.readBatch(limit)
	if err != nil {
		h.r = nil
		h.f.Seek(start, io.SeekStart) // the next call reads again and reports its own error
		return false
	}
	h.readyMu.Lock()
	h.ready = append(h.ready, b)
	h.readyMu.Unlock()
	return !b.eof
}

// writeData checks file:write's data (arguments 3 on).
func writeData(args []any) ([]string, error) {
	data := make([]string, 0, len(args))
	for i := 2; i < len(args); i++ {
		s, err := argString(args, i)
		if err != nil {
			return nil, fmt.Errorf("argument %d: string expected, got %s", i-1, typeName(args, i))
		}
		data = append(data, s)
	}
	return data, nil
}

// fileWrite: file:write(h, back, data...) → true.
func (o *IO) fileWrite(c scheduler.Call) error {
	data, err := writeData(c.Args)
	if err != nil {
		return err
	}
	return o.fileOp(c, "file:write", func(ctx context.Context, h *openFile) (any, error) {
		for _, d := range data {
			if err := writeChunks(ctx, h.f, d); err != nil {
				return nil, err
			}
		}
		return true, nil
	})
}

// seekArgs checks file:seek's whence and offset (arguments 3 and 4).
func seekArgs(args []any) (whence int, offset int64, err error) {
	w, err := optArgString(args, 2, "cur")
	if err != nil {
		return 0, 0, fmt.Errorf("argument 1: string expected, got %s", typeName(args, 2))
	}
	switch w {
	case "set":
		whence = io.SeekStart
	case "cur":
		whence = io.SeekCurrent
	case "end":
		whence = io.SeekEnd
	default:
		return 0, 0, fmt.Errorf("argument 1: invalid option %q", w)
	}
	if len(args) > 3 && args[3] != nil {
		n, ok := args[3].(int64)
		if !ok {
			return 0, 0, errors.New("argument 2: an integer expected")
		}
		offset = n
	}
	return whence, offset, nil
}

// fileSeek: file:seek(h, back [, whence [, offset]]) → the position, as
// Lua's file:seek ("set", "cur" (the default), "end").
func (o *IO) fileSeek(c scheduler.Call) error {
	whence, offset, err := seekArgs(c.Args)
	if err != nil {
		return err
	}
	return o.fileOp(c, "file:seek", func(ctx context.Context, h *openFile) (any, error) {
		return h.f.Seek(offset, whence)
	})
}

// fileClose: file:close(h, back) → true.
func (o *IO) fileClose(c scheduler.Call) error {
	id, _, _, err := o.handle(c)
	if err != nil {
		return err
	}
	o.fsOp(c, func(context.Context) (any, error) { return true, o.closeFile(id) })
	return nil
}

// closeFile forgets handle id and closes its file (waiting for an
// operation in flight on it, which its context bounds).
func (o *IO) closeFile(id int64) error {
	h := o.files.get(id)
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o.files.forget(id)
	return h.closeLocked()
}

// forget removes handle id from the open files.
func (fs *openFiles) forget(id int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	h := fs.byID[id]
	if h == nil {
		return
	}
	delete(fs.byID, id)
	mine := fs.byOwner[h.owner]
	for i, x := range mine {
		if x == id {
			mine = append(mine[:i], mine[i+1:]...)
			break
		}
	}
	if len(mine) == 0 {
		delete(fs.byOwner, h.owner)
	} else {
		fs.byOwner[h.owner] = mine
	}
}

// closeLocked closes h's file (h.mu held).
func (h *openFile) closeLocked() error {
	if h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f, h.r = nil, nil
	h.dropReady()
	if err != nil {
		return fsError("file:close", h.path, err)
	}
	return nil
}

// CloseFiles closes the files process pid left open (at its end), on
// the IO's goroutines: an operation in flight on one of them is waited
// for there, not on the caller's (a worker's) goroutine.
func (o *IO) CloseFiles(pid scheduler.PID) {
	o.files.mu.Lock()
	mine := o.files.byOwner[pid]
	o.files.mu.Unlock()
	if len(mine) == 0 {
		return
	}
	ids := append([]int64(nil), mine...)
	o.start(func() {
		for _, id := range ids {
			o.closeFile(id)
		}
	})
}

// OpenFiles is how many files fs.open handles hold open.
func (o *IO) OpenFiles() int {
	o.files.mu.Lock()
	defer o.files.mu.Unlock()
	return len(o.files.byID)
}
