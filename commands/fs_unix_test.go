//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFSNotRegular: a FIFO and a device are refused at once (opening a
// FIFO used to wait for a writer forever, and /dev/zero was read until
// memory ran out), so that reading many does not use up the file slots.
func TestFSNotRegular(t *testing.T) {
	s, io := newSchedIO(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for range cap(io.fsSlots) + 1 {
		h, took := call(t, s, "fs.read", fifo)
		_, err := result(h)
		require.EqualError(t, err, "fs.read "+fifo+": not a regular file")
		require.Less(t, took, time.Second)
	}
	h, _ := call(t, s, "fs.list", fifo)
	_, err := result(h)
	assert.EqualError(t, err, "fs.list "+fifo+": not a directory")
	h, _ = call(t, s, "fs.write", fifo, "x")
	_, err = result(h)
	assert.EqualError(t, err, "fs.write "+fifo+": not a regular file")
	h, _ = call(t, s, "fs.read", "/dev/zero")
	_, err = result(h)
	assert.EqualError(t, err, "fs.read /dev/zero: not a regular file")
}

// TestFSWriteUmask: a new file gets 0666 less the umask; a replaced one
// keeps its mode whatever the umask.
func TestFSWriteUmask(t *testing.T) {
	s := newSched(t)
	dir := t.TempDir()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o077, 0o600}, {0o022, 0o644}, {0o002, 0o664}} {
		syscall.Umask(tc.umask)
		p := filepath.Join(dir, "new")
		os.Remove(p)
		h, _ := call(t, s, "fs.write", p, "x")
		_, err := result(h)
		require.NoError(t, err)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, tc.want, fi.Mode().Perm(), "umask %o", tc.umask)
	}
	p := filepath.Join(dir, "kept")
	require.NoError(t, os.WriteFile(p, nil, 0o640))
	require.NoError(t, os.Chmod(p, 0o640))
	syscall.Umask(0o077)
	h, _ := call(t, s, "fs.write", p, "y")
	_, err := result(h)
	require.NoError(t, err)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}
