package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/luaproc"
)

// dial connects to addr and returns the connection and a line reader.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(hung))
	return c, bufio.NewReader(c)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSuffix(line, "\n")
}

// An echo service: the listener moves to an acceptor process, each
// connection to a process of its own; every read format works.
const echoService = `
function conn(c)
  while true do
    local cmd, err = c:read("l")
    if not cmd then return end
    if cmd == "count" then
      c:write("[", c:read(3), "]\n")
    elseif cmd == "L" then
      c:write("[", c:read("*L"), "]\n")
    elseif cmd == "all" then
      c:write("[", c:read("a"), "]\n")
      c:close()
      return
    elseif cmd == "quit" then
      return
    else
      c:write(cmd:upper(), "\n")
    end
  end
end
function acceptor(l)
  while true do
    local c, err = l:accept()
    if not c then return err end
    process.spawn("conn", c)
  end
end
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  local addr = l.addr
  process.spawn("acceptor", l)
  local r1, r2 = l:accept()
  process.send(inbox, {addr = addr, moved = r2, again = select(2, pcall(process.send, inbox, l))})
  process.receive()
end
`

func TestNetEcho(t *testing.T) {
	e := start(t, echoService)
	m := e.recv().Value.(map[string]any)
	assert.Equal(t, "moved", m["moved"], "the listener's old handle")
	assert.Contains(t, m["again"], "moved")
	addr := m["addr"].(string)
	c, r := dial(t, addr)
	fmt.Fprint(c, "hello\r\ncount\nabcdef\nL\nline two\n")
	assert.Equal(t, "HELLO", readLine(t, r), "a CR before the LF is dropped by \"l\"")
	assert.Equal(t, "[abc]", readLine(t, r))
	assert.Equal(t, "DEF", readLine(t, r), "what a count left stays buffered")
	assert.Equal(t, "[line two", readLine(t, r))
	assert.Equal(t, "]", readLine(t, r))
	fmt.Fprint(c, "all\nrest of\nit")
	c.(*net.TCPConn).CloseWrite()
	assert.Equal(t, "[rest of", readLine(t, r))
	assert.Equal(t, "it]", readLine(t, r))
	_, err := r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "c:close() closes")

	// many at once, each its own process
	const n = 20
	conns := make([]net.Conn, n)
	readers := make([]*bufio.Reader, n)
	for i := range n {
		conns[i], readers[i] = dial(t, addr)
		fmt.Fprintf(conns[i], "c%d\n", i)
	}
	for i := range n {
		assert.Equal(t, fmt.Sprintf("C%d", i), readLine(t, readers[i]))
	}
}

// A connection closes when its process ends; the last line without an
// end is still read.
func TestNetClosedWithOwner(t *testing.T) {
	e := start(t, `
function conn(c, inbox)
  local a = c:read("l")
  local b = c:read("l")
  local x, err = c:read("l")
  process.send(inbox, {a, b, tostring(x), err})
end
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  process.send(inbox, l.addr)
  while true do
    process.spawn("conn", assert(l:accept()), inbox)
  end
end`)
	addr := e.addr()
	c, _ := dial(t, addr)
	fmt.Fprint(c, "first\nmid-li")
	c.(*net.TCPConn).CloseWrite()
	assert.Equal(t, []any{"first", "mid-li", "nil", "closed"}, e.recv().Value)
	waitClosed(t, c) // its process ended
}

// A read with a timeout answers nil, "timeout" and loses nothing: what
// came before it is there for the next read.
func TestNetReadTimeout(t *testing.T) {
	e := start(t, `
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  process.send(inbox, l.addr)
  local a, aerr = l:accept(0.05)
  process.send(inbox, {tostring(a), aerr})
  local c = assert(l:accept())
  c:settimeout(0.05)
  local x, err = c:read("l")
  process.send(inbox, {tostring(x), err})
  process.receive()
  c:settimeout(nil)
  process.send(inbox, c:read("l"))
end`)
	addr := e.addr()
	assert.Equal(t, []any{"nil", "timeout"}, e.recv().Value)
	c, _ := dial(t, addr)
	fmt.Fprint(c, "half a ")
	assert.Equal(t, []any{"nil", "timeout"}, e.recv().Value)
	fmt.Fprint(c, "line\n")
	require.NoError(t, e.in.Send(e.main.PID(), "go on"))
	assert.Equal(t, "half a line", e.recv().Value)
}

// net.connect reaches a Go server; failures are nil, err; it needs the
// net permission.
func TestNetConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Fprintf(c, "you said %s and bye", line)
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := closed.Addr().String()
	closed.Close()
	src := fmt.Sprintf(`
function main(inbox)
  local c = assert(net.connect(%q, 5))
  local ok = c["local"] ~= nil and c.remote == %q
  c:write("hi", 1, "\n")
  local all = c:read("a")
  local x, err = c:read("a")
  local _, refused = net.connect(%q)
  process.send(inbox, {ok, all, tostring(x), err, refused})
end`, ln.Addr().String(), ln.Addr().String(), closedAddr)
	e := start(t, src)
	assert.Equal(t, []any{true, "you said hi1\n and bye", "nil", "closed", "net.connect " + closedAddr + ": connect: connection refused"}, e.recv().Value)

	e2 := start(t, `function main(inbox) process.send(inbox, select(2, pcall(net.connect, "127.0.0.1:1"))) end`, "listen")
	assert.Equal(t, "net.connect: net is not allowed (run without --sandbox or with --allow net)", e2.recv().Value)
	e3 := start(t, `function main(inbox) process.send(inbox, select(2, pcall(net.listen, "127.0.0.1:0"))) end`, "net")
	assert.Equal(t, "net.listen: listen is not allowed (run without --sandbox or with --allow listen)", e3.recv().Value)
}

// A read waits without a worker: with one worker and no watchdog
// helpers, a process blocked in c:read does not stop another.
func TestNetReadHoldsNoWorker(t *testing.T) {
	rt, err := luaproc.New(luaproc.Options{Workers: 1, NoWatchdog: true, Allow: []string{"listen", "net"},
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), hung)
		defer cancel()
		rt.Shutdown(ctx)
	}()
	in, err := rt.NewInbox()
	require.NoError(t, err)
	s, err := rt.LoadString("t.lua", `
function reader(addr) local c = assert(net.connect(addr)); return c:read("l") end
function main(inbox, addr)
  local r = process.spawn("reader", addr)
  process.sleep(0.01)
  process.send(inbox, "main runs")
  return process.wait(r)
end`)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	h, err := rt.Start(context.Background(), s, "main", int64(in.PID()), ln.Addr().String())
	require.NoError(t, err)
	c, err := ln.Accept()
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hung)
	defer cancel()
	m, err := in.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, "main runs", m.Value)
	fmt.Fprint(c, "now\n")
	res, err := h.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, []any{true, "now"}, []any(res))
}

// A connection sent to a process that has ended never arrives; it is
// closed (by the collector) rather than left open.
func TestNetLostInTransitCloses(t *testing.T) {
	e := start(t, `
function gone() end
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  process.send(inbox, l.addr)
  local c = assert(l:accept())
  local pid = process.spawn("gone")
  process.wait(pid)
  local ok, err = process.send(pid, {conn = c})
  process.send(inbox, {tostring(ok), select(2, c:read())})
  process.receive()
end`)
	addr := e.addr()
	c, _ := dial(t, addr)
	assert.Equal(t, []any{"nil", "moved"}, e.recv().Value)
	deadline := time.Now().Add(hung)
	buf := make([]byte, 1)
	for {
		runtime.GC()
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := c.Read(buf)
		if err == io.EOF {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection stayed open: %v", err)
		}
	}
}

// Handles are not other values: misuse raises, a moved connection's
// methods answer nil, "moved", and a handle cannot go to JSON or a log.
func TestNetHandleMisuse(t *testing.T) {
	e := start(t, `
function keep(c) process.receive() end
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  local out = {}
  out[1] = select(2, pcall(l.accept, "x"))
  out[2] = select(2, pcall(function() return l:read() end))
  out[3] = select(3, pcall(json.encode, {l}))
  local c = assert(net.connect(l.addr))
  local s = assert(l:accept())
  process.spawn("keep", c)
  out[4] = select(2, c:write("x"))
  out[5] = select(2, c:read())
  out[6] = select(2, c:close())
  out[7] = tostring(c):match("^connection") ~= nil
  out[8] = select(2, pcall(s.read, s, 0))
  out[9] = l:close()
  out[10] = select(2, l:accept())
  process.send(inbox, out)
end`)
	v := e.recv().Value
	out, ok := v.([]any)
	require.True(t, ok, "%#v", v)
	assert.Contains(t, out[0], "l:accept: a listener expected")
	assert.Contains(t, out[1], "attempt to call method 'read'")
	assert.Contains(t, out[2], "userdata")
	assert.Equal(t, []any{"moved", "moved", "moved", true}, out[3:7])
	assert.Contains(t, out[7], "a count of at least 1 expected")
	assert.Equal(t, []any{true, "closed"}, out[8:10])
}

// connToInbox is the main of a test whose conn(c, inbox) gets the one
// connection: it sends the listener's address to the test's inbox, and
// passes the connection it accepts to a conn process.
const connToInbox = `
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  process.send(inbox, l.addr)
  local c = l:accept()
  process.spawn("conn", c, inbox)
  process.receive()
end`

// A read that its connection's buffer answers needs no command: it works
// where a blocking call cannot (a string.gsub callback), for lines and
// counts; one that must wait still raises there.
func TestNetReadFromBuffer(t *testing.T) {
	e := start(t, `
function conn(c, inbox)
  local first = c:read("l") -- waits; the rest arrived with it
  local got = {first}
  string.gsub("ab", ".", function() got[#got + 1] = c:read("l") end)
  got[#got + 1] = (string.gsub("x", ".", function() return c:read(2) end))
  local ok, err = pcall(string.gsub, "x", ".", function() return c:read("l") end)
  got[#got + 1] = ok and "no error" or "raised"
  process.send(inbox, table.concat(got, ","))
end
`+connToInbox)
	addr := e.recv().Value.(string)
	c, _ := dial(t, addr)
	fmt.Fprint(c, "one\ntwo\nthree\nXY")
	assert.Equal(t, "one,two,three,XY,raised", e.recv().Value)
}

// A line the socket has received but the buffer has not is read without
// a command (inline, as a gsub callback can), once it has arrived; a
// write larger than the send buffer is written partly inline and the
// rest by its command, every byte in order.
func TestNetInlineReadAndPartialWrite(t *testing.T) {
	e := start(t, `
function conn(c, inbox)
  process.send(inbox, "accepted")
  -- nothing is buffered yet: this read is the socket's
  local line
  repeat
    local ok, got = pcall(string.gsub, "x", ".", function() return c:read("l") end)
    if ok then line = got else time.sleep(0.005) end
  until line
  process.send(inbox, line)
  local big = string.rep("0123456789abcdef", 1024 * 1024) -- 16 MiB
  process.send(inbox, tostring(c:write(big, "\n")))
end
`+connToInbox)
	addr := e.recv().Value.(string)
	c, r := dial(t, addr)
	assert.Equal(t, "accepted", e.recv().Value)
	fmt.Fprint(c, "inline\n")
	assert.Equal(t, "inline", e.recv().Value)
	big := readLine(t, r)
	assert.Equal(t, strings.Repeat("0123456789abcdef", 1024*1024), big)
	assert.Equal(t, "true", e.recv().Value)
}
