package commands

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

func TestFSReadWriteList(t *testing.T) {
	s := newSched(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	bin := filepath.Join(dir, "b.bin")
	data := "\x00\x01binary\x00\xff\xfe\n\x00"
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))

	h, _ := call(t, s, "fs.write", a, "hello")
	got, err := result(h)
	require.NoError(t, err)
	assert.Equal(t, true, got)
	h, _ = call(t, s, "fs.write", bin, []byte(data))
	_, err = result(h)
	require.NoError(t, err)

	h, _ = call(t, s, "fs.read", a)
	got, err = result(h)
	require.NoError(t, err)
	assert.Equal(t, "hello", got)
	h, _ = call(t, s, "fs.read", bin)
	got, err = result(h)
	require.NoError(t, err)
	assert.Equal(t, data, got, "NUL bytes survive")

	// sorted, and no temp file left behind
	h, _ = call(t, s, "fs.list", dir)
	got, err = result(h)
	require.NoError(t, err)
	assert.Equal(t, []any{"a.txt", "b.bin", "sub"}, got)
	h, _ = call(t, s, "fs.list", filepath.Join(dir, "sub"))
	got, err = result(h)
	require.NoError(t, err)
	assert.Equal(t, []any{}, got)
}

func TestFSWriteReplaces(t *testing.T) {
	s := newSched(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(p, []byte("old contents, longer than the new"), 0o600))
	require.NoError(t, os.Chmod(p, 0o600))
	before, err := os.Stat(p)
	require.NoError(t, err)

	h, _ := call(t, s, "fs.write", p, "new")
	_, err = result(h)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	after, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), after.Mode().Perm(), "the mode is kept")
	assert.False(t, os.SameFile(before, after), "a new file was renamed over the old one")

	// through a symbolic link: the target is replaced, the link stays
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("secret", link))
	h, _ = call(t, s, "fs.write", link, "via link")
	_, err = result(h)
	require.NoError(t, err)
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "via link", string(b))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink)

	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, 2, "no temp file left behind")
}

func TestFSErrors(t *testing.T) {
	s := newSched(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	missing := filepath.Join(dir, "no", "such")

	for _, tc := range []struct {
		cmd  string
		args []any
		want string
	}{
		{"fs.read", []any{missing}, "fs.read " + missing + ": no such file or directory"},
		{"fs.read", []any{dir}, "fs.read " + dir + ": is a directory"},
		{"fs.list", []any{missing}, "fs.list " + missing + ": no such file or directory"},
		{"fs.list", []any{file}, "fs.list " + file + ": not a directory"},
		{"fs.write", []any{missing, "x"}, "fs.write " + missing + ": no such file or directory"},
		{"fs.write", []any{dir, "x"}, "fs.write " + dir + ": is a directory"},
		{"fs.write", []any{"/dev/null", "x"}, "fs.write /dev/null: not a regular file"},
		{"fs.read", []any{true}, "fs.read: argument 1: string expected, got boolean"},
		{"fs.read", []any{[]any{"x"}}, "fs.read: argument 1: string expected, got table"},
		{"fs.read", []any{1.5}, "fs.read 1.5: no such file or directory"}, // a number is a string
		{"fs.read", []any{"a\x00b"}, "fs.read: argument 1 contains a NUL byte"},
		{"fs.list", []any{"a\x00b"}, "fs.list: argument 1 contains a NUL byte"},
		{"fs.write", []any{"a\x00b", "x"}, "fs.write: argument 1 contains a NUL byte"},
		{"fs.read", nil, "fs.read: argument 1: string expected, got no value"},
		{"fs.read", []any{""}, "fs.read: argument 1: empty path"},
		{"fs.write", []any{file}, "fs.write: argument 2: string expected, got no value"},
		{"fs.write", []any{file, map[string]any{}}, "fs.write: argument 2: string expected, got table"},
		{"fs.write", []any{file, map[any]any{}}, "fs.write: argument 2: string expected, got table"},
		{"fs.list", []any{nil}, "fs.list: argument 1: string expected, got nil"},
	} {
		h, _ := call(t, s, tc.cmd, tc.args...)
		_, err := result(h)
		assert.EqualError(t, err, tc.want)
	}
	// the failed writes left nothing behind
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, 1)
}

// TestFSWriteNumbers: numbers are written as Lua's tostring writes them.
func TestFSWriteNumbers(t *testing.T) {
	s := newSched(t)
	p := filepath.Join(t.TempDir(), "n")
	for _, tc := range []struct {
		v    any
		want string
	}{{int64(12), "12"}, {1.5, "1.5"}, {3.0, "3"}} {
		h, _ := call(t, s, "fs.write", p, tc.v)
		_, err := result(h)
		require.NoError(t, err)
		h, _ = call(t, s, "fs.read", p)
		got, err := result(h)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}

// TestFSReadTooLarge: a file over the cap fails, by its size or (a file
// whose size says 0, as in /proc) by what it holds.
func TestFSReadTooLarge(t *testing.T) {
	s, io := newSchedIO(t)
	io.maxData = 1024
	dir := t.TempDir()
	fits, over := filepath.Join(dir, "fits"), filepath.Join(dir, "over")
	require.NoError(t, os.WriteFile(fits, make([]byte, 1024), 0o644))
	require.NoError(t, os.WriteFile(over, make([]byte, 1025), 0o644))
	h, _ := call(t, s, "fs.read", fits)
	got, err := result(h)
	require.NoError(t, err)
	assert.Len(t, got, 1024)
	h, _ = call(t, s, "fs.read", over)
	_, err = result(h)
	assert.EqualError(t, err, "fs.read "+over+": file larger than 1 KiB")

	const status = "/proc/self/status"
	if fi, err := os.Stat(status); err != nil || fi.Size() != 0 {
		t.Skip("no /proc/self/status of size 0")
	}
	io.maxData = 64
	h, _ = call(t, s, "fs.read", status)
	_, err = result(h)
	assert.EqualError(t, err, "fs.read "+status+": file larger than 64 bytes")
}

// endless is a reader of zeros that never ends; it cancels its context
// after cancelAfter reads.
type endless struct {
	reads, cancelAfter int
	cancel             context.CancelCauseFunc
}

func (r *endless) Read(p []byte) (int, error) {
	r.reads++
	if r.reads == r.cancelAfter {
		r.cancel(errors.New("killed"))
	}
	clear(p)
	return len(p), nil
}

// TestReadCappedStops: a read stops at the first chunk after its context
// is done (fs.read of a big file that its process is killed during).
func TestReadCappedStops(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &endless{cancelAfter: 3, cancel: cancel}
	_, err := readCapped(ctx, r, 10, maxDataBytes, "file")
	assert.EqualError(t, err, "killed")
	assert.Equal(t, 3, r.reads)
}

// TestReadCappedLimit: an endless reader fails past the limit, having
// been asked for one byte more than the limit in all; a reader of
// exactly the limit does not fail.
func TestReadCappedLimit(t *testing.T) {
	r := &endless{}
	_, err := readCapped(context.Background(), &countingReader{r: r}, 0, 3*ioChunk+5, "body")
	assert.EqualError(t, err, "body larger than 3145733 bytes")
	cr := &countingReader{r: &endless{}}
	_, err = readCapped(context.Background(), cr, 10, 100, "body")
	assert.Error(t, err)
	assert.Equal(t, int64(101), cr.n, "bytes read for a limit of 100")
	b, err := readCapped(context.Background(), strings.NewReader(strings.Repeat("x", 100)), 0, 100, "body")
	assert.NoError(t, err)
	assert.Len(t, b, 100)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// countdown is a context that reports itself done from its n-th Err on.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n <= 0 {
		return context.Canceled
	}
	return nil
}

// TestFSWriteCancelled: a write whose context ends midway removes its
// temp file and leaves the old contents.
func TestFSWriteCancelled(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	data := strings.Repeat("x", 3*ioChunk)
	ctx := &countdown{Context: context.Background(), n: 2} // done at the 2nd chunk
	err := writeAtomic(ctx, p, data)
	assert.ErrorIs(t, err, context.Canceled)
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, names, 1, "the temp file is removed")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
}

// TestFSWriteKilled: a process killed during a big fs.write leaves no
// temp file once the scheduler has shut down and the IO has closed
// (Close waits for the write to notice the kill and clean up).
func TestFSWriteKilled(t *testing.T) {
	reg := new(scheduler.Registry)
	io := NewIO()
	io.Register(reg)
	s := scheduler.New(scheduler.Options{Workers: 2, Dispatcher: reg})
	dir := t.TempDir()
	data := strings.Repeat("x", 64<<20)
	h, err := s.Submit(&caller{cmd: "fs.write", args: []any{filepath.Join(dir, "big"), data}}, "", nil)
	require.NoError(t, err)
	for t0 := time.Now(); time.Since(t0) < 5*time.Second; {
		if names, _ := os.ReadDir(dir); len(names) > 0 {
			break // the temp file exists: the write is under way
		}
	}
	require.NoError(t, s.Kill(h.PID(), errors.New("stop")))
	shutdown(t, s)
	require.NoError(t, io.Close(t.Context()))
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, n := range names {
		assert.Equal(t, "big", n.Name(), "only the file, if the write won the race")
	}
}

// TestReadLineIsCapped: a line longer than the cap fails instead of
// growing without bound (fs.lines over /dev/zero, or a huge one-line
// file), short lines and a last line without its end come whole.
func TestReadLineIsCapped(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("short\n"+strings.Repeat("x", 100)+"\nlast"), 16)
	line, err := readLine(r, 50)
	require.NoError(t, err)
	assert.Equal(t, "short\n", line)
	_, err = readLine(r, 50)
	assert.ErrorAs(t, err, new(tooLargeError))
	r = bufio.NewReaderSize(strings.NewReader("last"), 16)
	line, err = readLine(r, 50)
	require.NoError(t, err)
	assert.Equal(t, "last", line)
	line, err = readLine(r, 50)
	require.NoError(t, err)
	assert.Equal(t, "", line, "the end of the file")
}
