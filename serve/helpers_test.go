package serve_test

// A test starts a runtime with a script whose main serves and sends what
// the test needs (the server's address) to a Go inbox; the test drives it
// with real clients. Waits are on events (a message, a closed
// connection); the bounds (hung) only end a hung test.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/luarun/luarun/luaproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hung bounds a wait that only a bug makes long — or a CI run of every
// package at once under -race on two cores, where the chat example took
// over 20 s once.
const hung = 2 * time.Minute

// syncBuffer is a log buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is a running runtime, its inbox and its log.
type env struct {
	t    *testing.T
	rt   *luaproc.Runtime
	in   *luaproc.Inbox
	logs *syncBuffer
	main luaproc.Handle
	down bool // Shutdown was called by the test
}

// start runs src's main(inbox) in a runtime allowing allow (nil: listen,
// net and http); Cleanup shuts it down.
func start(t *testing.T, src string, allow ...string) *env {
	t.Helper()
	if allow == nil {
		allow = []string{"listen", "net", "http"}
	}
	logs := &syncBuffer{}
	logger := slog.New(log.NewWithOptions(logs, log.Options{Level: log.DebugLevel}))
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Allow: allow, Logger: logger, Stdout: logs})
	require.NoError(t, err)
	e := &env{t: t, rt: rt, logs: logs}
	t.Cleanup(func() {
		if !e.down {
			e.shutdown()
		}
	})
	in, err := rt.NewInbox()
	require.NoError(t, err)
	e.in = in
	s, err := rt.LoadString("test.lua", src)
	require.NoError(t, err)
	e.main, err = rt.Start(context.Background(), s, "main", int64(in.PID()))
	require.NoError(t, err)
	return e
}

func (e *env) shutdown() {
	e.down = true
	ctx, cancel := context.WithTimeout(context.Background(), hung)
	defer cancel()
	e.rt.Shutdown(ctx)
}

// recv is the next message to the inbox (a failure of main fails the
// test at once).
func (e *env) recv() luaproc.Message {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hung)
	defer cancel()
	type got struct {
		m   luaproc.Message
		err error
	}
	ch := make(chan got, 1)
	go func() {
		m, err := e.in.Receive(ctx)
		ch <- got{m, err}
	}()
	select {
	case g := <-ch:
		require.NoError(e.t, g.err, "no message; log:\n%s", e.logs.String())
		return g.m
	case <-e.main.Done():
		if _, err := e.main.Result(); err != nil {
			cancel()
			e.t.Fatalf("main failed: %v; log:\n%s", err, e.logs.String())
		}
	}
	g := <-ch // main ended after sending
	require.NoError(e.t, g.err, "no message; log:\n%s", e.logs.String())
	return g.m
}

// addr is the first message: the server's address.
func (e *env) addr() string {
	e.t.Helper()
	m := e.recv()
	a, ok := m.Value.(string)
	require.True(e.t, ok, "an address expected, got %#v", m.Value)
	return a
}

// get fetches url with client c (nil: a fresh one) and returns the status
// and body.
func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	if c == nil {
		c = &http.Client{Transport: &http.Transport{}}
		defer c.CloseIdleConnections()
	}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// lua wraps handler definitions with a main that serves entry with opts
// and sends the address to the inbox, then waits for "close" (srv:close,
// then "closed" sent) or for ever.
func serveScript(entry, opts, handlers string) string {
	return fmt.Sprintf(`
%s
function main(inbox)
  local srv = assert(http.serve("127.0.0.1:0", %q, %s))
  process.send(inbox, srv.addr)
  while true do
    local msg = process.receive()
    if msg == "close" then
      process.send(inbox, tostring(srv:close()))
    elseif msg == "return" then
      return
    end
  end
end
`, handlers, entry, opts)
}
