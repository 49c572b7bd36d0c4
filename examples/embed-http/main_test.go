package main

// The embedding guide's program, run as a user would: built, started,
// asked, crashed into, interrupted. Every wait is for an event (a line
// on its output, a response, its exit), bounded generously.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lines collects a reader's lines and lets a test wait for one.
type lines struct {
	mu      sync.Mutex
	all     []string
	partial []byte        // the last line, until its newline comes
	changed chan struct{} // closed and replaced at each new line
}

// newLines is a writer for a command's output (cmd.Stdout, cmd.Stderr)
// that keeps its lines. A writer, not a pipe read by a goroutine of the
// test: cmd.Wait closes its pipes when the command exits, and a reader
// still behind lost the last lines ("drained", written just before the
// exit); with a writer, Wait returns once exec's copy has written all.
func newLines() *lines { return &lines{changed: make(chan struct{})} }

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.all = append(l.all, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

// waitFor waits until a line contains each of subs, and returns it.
func (l *lines) waitFor(t *testing.T, subs ...string) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		l.mu.Lock()
		for _, s := range l.all {
			if containsAll(s, subs) {
				l.mu.Unlock()
				return s
			}
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no line with %q in:\n%s", subs, l.text())
		}
	}
}

func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func put(t *testing.T, url, value string) {
	t.Helper()
	req, err := http.NewRequest("PUT", url, strings.NewReader(value))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
}

// TestServiceDrainsOnSIGINT: requests are served by Lua processes, a
// crashed pool worker is restarted, and at SIGINT the requests in flight
// are answered before the program exits 0.
func TestServiceDrainsOnSIGINT(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "embed-http")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db-latency", "300ms", "-v")
	outLines, errLines := newLines(), newLines()
	cmd.Stdout, cmd.Stderr = outLines, errLines
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Kill() // if the test failed before the program ended
		<-exited
	})
	go func() { exited <- cmd.Wait() }()
	base := "http://" + strings.TrimPrefix(outLines.waitFor(t, "listening on "), "listening on ")

	code, body := get(t, base+"/items/apple")
	require.Equal(t, 200, code)
	require.Regexp(t, `^apple = red \(worker [1-4], item 1\)\n$`, body)
	code, body = get(t, base+"/items/nope")
	require.Equal(t, 404, code)
	require.Equal(t, "no item nope\n", body)

	// A worker that crashes fails its caller's request; the supervisor
	// restarts it under its name, and /healthz says so.
	put(t, base+"/items/bad", "boom")
	code, body = get(t, base+"/items/bad")
	require.Equal(t, 503, code)
	require.Contains(t, body, "cannot render bad")
	waitHealthy(t, base)

	// Requests in flight at SIGINT are answered.
	const n = 8
	for i := range n {
		put(t, fmt.Sprintf("%s/items/drain%d", base, i), fmt.Sprint("v", i))
	}
	type answer struct {
		code int
		body string
		err  error
	}
	answers := make(chan answer, n)
	for i := range n {
		go func() {
			resp, err := http.Get(fmt.Sprintf("%s/items/drain%d", base, i))
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, string(b), err}
		}()
	}
	for i := range n { // each is in its database lookup (300 ms)
		errLines.waitFor(t, "msg=db.get", fmt.Sprintf("key=drain%d", i))
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	for range n {
		a := <-answers
		require.NoError(t, a.err)
		require.Equal(t, 200, a.code, a.body)
		require.Regexp(t, `^drain\d = v\d \(worker [1-4], item \d+\)\n$`, a.body)
	}
	select {
	case err := <-exited:
		exited <- err // for Cleanup
		require.NoError(t, err, "exit status; stderr:\n%s", errLines.text())
	case <-time.After(60 * time.Second):
		t.Fatalf("did not exit after SIGINT; stderr:\n%s", errLines.text())
	}
	errLines.waitFor(t, "msg=drained")
	require.NotContains(t, errLines.text(), "level=ERROR")
}

// waitHealthy polls /healthz until every pool worker is registered.
func waitHealthy(t *testing.T, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if code, _ := get(t, base+"/healthz"); code == 200 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the pool did not recover")
}
