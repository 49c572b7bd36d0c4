package commands

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	// a new file gets 0644 (not CreateTemp's 0600)
	fi, err := os.Stat(a)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

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
		{"fs.read", []any{1.5}, "fs.read: argument 1: string expected, got float64"},
		{"fs.read", nil, "fs.read: argument 1: string expected, got no value"},
		{"fs.read", []any{""}, "fs.read: argument 1: empty path"},
		{"fs.write", []any{file}, "fs.write: argument 2: string expected, got no value"},
		{"fs.write", []any{file, map[string]any{}}, "fs.write: argument 2: string expected, got map[string]interface {}"},
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
