package luaproc

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/luarun/luarun/payload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a bytes.Buffer safe for the runtime's concurrent writes.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced at each Write; nil until waitFor
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// hungAfter is how long the helpers wait for an event before they call
// the test hung: long, since CI runs every package at once on two cores
// (Lua 5.1's gc.lua took over 20 s there).
const hungAfter = 2 * time.Minute

// waitFor blocks until the buffer holds substr: an event a test waits on
// instead of a deadline (hungAfter only bounds a hung test).
func (s *syncBuffer) waitFor(t testing.TB, substr string) {
	t.Helper()
	timeout := time.After(hungAfter)
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), substr) {
			s.mu.Unlock()
			return
		}
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		select {
		case <-written:
		case <-timeout:
			t.Fatalf("never written: %q; have:\n%s", substr, s.String())
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newTestRuntime makes a runtime whose output goes to the returned buffers,
// shut down at the end of the test.
func newTestRuntime(t testing.TB, opts Options) (*Runtime, *syncBuffer, *syncBuffer) {
	t.Helper()
	stdout, logs := &syncBuffer{}, &syncBuffer{}
	if opts.Stdout == nil {
		opts.Stdout = stdout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(log.NewWithOptions(logs, log.Options{Level: log.DebugLevel}))
	}
	rt, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
	})
	return rt, stdout, logs
}

// runLua runs src's entry with args in rt and returns its result.
func runLua(t testing.TB, rt *Runtime, name, src, entry string, args ...any) (payload.Payloads, error) {
	t.Helper()
	s, err := rt.LoadString(name, src)
	require.NoError(t, err)
	h, err := rt.Start(context.Background(), s, entry, args...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hungAfter)
	defer cancel()
	res, err := h.Wait(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "process did not end")
	return res, err
}

var _ io.Writer = (*syncBuffer)(nil)
