package serve

// The net module: TCP listeners and connections.
//
// A socket (listener or connection) is a Go object that one process owns
// at a time; the Lua value is a userdata holding a handle, which points
// at the socket. The owner's context ending closes the socket (an
// AfterFunc, stopped when the socket moves). Passing a handle in a
// message or to process.spawn moves the socket: the runtime's conversion
// calls Move, which marks that handle moved (its methods answer nil,
// "moved") and returns a transit value; the receiving process's
// conversion calls Arrive on it, which makes the receiver the owner and
// gives it a new handle. A transit that never arrives (the message
// dropped, the spawn refused) is closed by its finalizer; one that
// arrives twice (a supervisor restarting a child with the same
// arguments) gives a moved handle the second time.
//
// Reads, writes and accepts are commands: each runs on a goroutine of
// its own and completes the call, so none holds a worker. Before a read
// or write becomes a command, one non-blocking system call tries it on
// the worker (netnow_unix.go): a line already received, or a write the
// send buffer takes whole, costs no yield and no goroutine. A connection
// reads through its own buffer (what a timed-out read had received stays
// there for the next read); one read and one write may be in flight at
// once (process.all), each kind one at a time.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/scheduler"
)

const (
	cmdAccept  = "net:accept"
	cmdConnect = "net.connect"
	cmdRead    = "net:read"
	cmdWrite   = "net:write"
)

// maxRead caps what one read ("l" or "a") gathers.
const maxRead = 64 << 20

// readChunk is how much a read asks the socket for at once.
const readChunk = 32 << 10

var (
	errClosed  = errors.New("closed")
	errTimeout = errors.New("timeout")
	errMoved   = errors.New("moved")
)

// socket is a listener or a connection and its owner.
type socket struct {
	ln   net.Listener // one of ln and conn is set
	conn net.Conn
	raw  syscall.RawConn // conn's descriptor, for the inline attempts (netnow_unix.go); nil if none

	local, remote string

	ownerMu   sync.Mutex
	stopOwner func() bool // the owner's AfterFunc; nil in transit
	closed    atomic.Bool

	timeout atomic.Int64 // settimeout, nanoseconds; < 0: none

	acceptMu sync.Mutex // one accept at a time

	readMu  sync.Mutex // one read at a time; guards buf, eof
	buf     []byte     // received, not read yet
	eof     bool       // the peer closed
	writeMu sync.Mutex // one write at a time
}

func newSocket(ln net.Listener, conn net.Conn) *socket {
	so := &socket{ln: ln, conn: conn}
	so.timeout.Store(-1)
	if ln != nil {
		so.local = ln.Addr().String()
	} else {
		so.local, so.remote = conn.LocalAddr().String(), conn.RemoteAddr().String()
		so.raw = rawConn(conn)
	}
	return so
}

// close closes the socket (once).
func (so *socket) close() {
	if so.closed.Swap(true) {
		return
	}
	if so.ln != nil {
		so.ln.Close()
	} else {
		so.conn.Close()
	}
}

// own makes ctx's process the owner: its end closes the socket.
func (so *socket) own(ctx context.Context) {
	so.ownerMu.Lock()
	so.stopOwner = context.AfterFunc(ctx, so.close)
	so.ownerMu.Unlock()
}

// release detaches the socket from its owner, for a move; false if it is
// closed (or being closed by its owner's end).
func (so *socket) release() bool {
	so.ownerMu.Lock()
	defer so.ownerMu.Unlock()
	if so.stopOwner != nil && !so.stopOwner() {
		return false
	}
	so.stopOwner = nil
	return !so.closed.Load()
}

// handle is what a socket's userdata holds: one process's reference.
type handle struct {
	so    *socket
	moved bool // given away: every method answers nil, "moved"
}

// Move gives the socket away (the runtime calls it when a handle is put
// in a message or in process.spawn's arguments).
func (h *handle) Move() (any, error) {
	if h.moved {
		return nil, errors.New("the socket was moved to another process")
	}
	if !h.so.release() {
		return nil, errors.New("the socket is closed")
	}
	h.moved = true
	t := &transit{so: h.so}
	runtime.SetFinalizer(t, (*transit).lost)
	return t, nil
}

// transit is a socket on its way to another process.
type transit struct {
	so      *socket
	arrived atomic.Bool
}

// lost closes a socket that never arrived.
func (t *transit) lost() {
	if !t.arrived.Load() {
		t.so.close()
	}
}

// arrive makes ctx's process the owner and returns its handle (a moved
// one if the socket arrived before).
func (t *transit) arrive(ctx context.Context) *handle {
	if t.arrived.Swap(true) {
		return &handle{so: t.so, moved: true}
	}
	t.so.own(ctx)
	return &handle{so: t.so}
}

// metatables are the handles' metatables, made in the template state.
type metatables struct {
	server, listener, conn *lua.LTable
	serverClose            lua.LValue
	listenerMethods        map[string]lua.LValue
	connMethods            map[string]lua.LValue
}

// makeMetatables makes them in L (the runtime's template state).
func (s *Service) makeMetatables(L *lua.LState) {
	fn := func(f lua.LGFunction) lua.LValue { return L.NewFunction(f) }
	mt := func(index lua.LGFunction, name string) *lua.LTable {
		t := L.CreateTable(0, 3)
		t.RawSetString("__index", fn(index))
		t.RawSetString("__metatable", lua.LString("locked"))
		t.RawSetString("__tostring", fn(func(L *lua.LState) int {
			L.Push(lua.LString(fmt.Sprintf("%s (%p)", name, L.CheckUserData(1).Value)))
			return 1
		}))
		t.Share()
		return t
	}
	s.mts.serverClose = fn(s.serverCloseFunc)
	s.mts.server = mt(s.serverIndex, "http server")
	s.mts.listenerMethods = map[string]lua.LValue{"accept": fn(s.acceptFunc), "close": fn(s.closeFunc)}
	s.mts.connMethods = map[string]lua.LValue{
		"read": fn(s.readFunc), "write": fn(s.writeFunc), "close": fn(s.closeFunc), "settimeout": fn(s.settimeoutFunc),
	}
	s.mts.listener = mt(s.socketIndex, "listener")
	s.mts.conn = mt(s.socketIndex, "connection")
}

// value is the userdata of h.
func (s *Service) value(h *handle) *lua.LUserData {
	mt := s.mts.conn
	if h.so.ln != nil {
		mt = s.mts.listener
	}
	return &lua.LUserData{Value: h, Metatable: mt}
}

// Arrival is the Lua value of a transit arriving in the process whose
// context is ctx (the runtime's conversion calls it); ok is false for
// any other value.
func (s *Service) Arrival(v any, ctx context.Context) (lua.LValue, bool) {
	t, ok := v.(*transit)
	if !ok {
		return nil, false
	}
	return s.value(t.arrive(ctx)), true
}

// socketIndex is a listener's or connection's __index.
func (s *Service) socketIndex(L *lua.LState) int {
	h := L.CheckUserData(1).Value.(*handle)
	key := L.CheckString(2)
	switch {
	case key == "addr" && h.so.ln != nil, key == "local":
		L.Push(lua.LString(h.so.local))
	case key == "remote" && h.so.conn != nil:
		L.Push(lua.LString(h.so.remote))
	case h.so.ln != nil && s.mts.listenerMethods[key] != nil:
		L.Push(s.mts.listenerMethods[key])
	case h.so.conn != nil && s.mts.connMethods[key] != nil:
		L.Push(s.mts.connMethods[key])
	default:
		L.Push(lua.LNil)
	}
	return 1
}

// checkHandle reads argument 1, a handle of a listener (listener true)
// or a connection; a moved one answers nil, "moved" (ok false, pushed).
func (s *Service) checkHandle(L *lua.LState, fn string, listener bool) (*handle, bool) {
	ud, isUD := L.Get(1).(*lua.LUserData)
	h, isHandle := (*handle)(nil), false
	if isUD {
		h, isHandle = ud.Value.(*handle)
	}
	if !isHandle || (h.so.ln != nil) != listener {
		what := "a connection"
		if listener {
			what = "a listener"
		}
		L.RaiseError("%s: %s expected (call it with ':')", fn, what)
	}
	if h.moved {
		L.Push(lua.LNil)
		L.Push(lua.LString(errMoved.Error()))
		return nil, false
	}
	return h, true
}

// listen is net.listen(addr) → a listener, or nil, err.
func (s *Service) listen(L *lua.LState) int {
	s.checkAllowed(L, "net.listen", "listen")
	addr := L.CheckString(1)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("net.listen %s: %v", addr, netError(err))))
		return 2
	}
	so := newSocket(ln, nil)
	so.own(s.host.Caller(L).Context())
	L.Push(s.value(&handle{so: so}))
	return 1
}

// connectFunc is net.connect(addr [, timeout]) → a connection, or nil, err.
func (s *Service) connectFunc(L *lua.LState) int {
	s.checkAllowed(L, "net.connect", "net")
	addr := L.CheckString(1)
	d, err := seconds(L.Get(2), -1)
	if err != nil {
		L.ArgError(2, err.Error())
	}
	return s.host.Caller(L).Block(L, "net.connect", cmdConnect, addr, d)
}

// connect dials; the connection arrives in the caller as a transit.
func (s *Service) connect(c scheduler.Call) error {
	addr, d := c.Args[0].(string), c.Args[1].(time.Duration)
	s.goRun(func() {
		ctx := c.Ctx
		if d >= 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		var dialer net.Dialer
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			if ctx.Err() != nil && c.Ctx.Err() == nil {
				err = errTimeout
			}
			c.Fail(fmt.Errorf("net.connect %s: %v", addr, netError(err)))
			return
		}
		s.complete(c, newSocket(nil, conn))
	})
	return nil
}

// complete answers c with a new socket, which arrives in the calling
// process; if the process has ended, the socket is closed.
func (s *Service) complete(c scheduler.Call, so *socket) {
	t := &transit{so: so}
	runtime.SetFinalizer(t, (*transit).lost)
	if !c.Complete(t) {
		t.arrived.Store(true)
		so.close()
	}
}

// acceptFunc is l:accept([timeout]).
func (s *Service) acceptFunc(L *lua.LState) int {
	h, ok := s.checkHandle(L, "l:accept", true)
	if !ok {
		return 2
	}
	d, err := seconds(L.Get(2), -1)
	if err != nil {
		L.ArgError(2, err.Error())
	}
	return s.host.Caller(L).Block(L, "l:accept", cmdAccept, h.so, d)
}

// accept waits for the next connection; the accept lock is let go
// before the requester resumes.
func (s *Service) accept(c scheduler.Call) error {
	so, d := c.Args[0].(*socket), c.Args[1].(time.Duration)
	s.goRun(func() {
		conn, err := so.acceptLocked(c.Ctx, d)
		if err != nil {
			c.Fail(sockError(so, err))
			return
		}
		s.complete(c, newSocket(nil, conn))
	})
	return nil
}

// acceptLocked waits up to d (forever if d < 0) for a connection,
// holding acceptMu; a kill of the process (ctx) ends the wait.
func (so *socket) acceptLocked(ctx context.Context, d time.Duration) (net.Conn, error) {
	so.acceptMu.Lock()
	defer so.acceptMu.Unlock()
	ln := so.ln.(*net.TCPListener)
	stop := interruptOn(ctx, func(t time.Time) { ln.SetDeadline(t) })
	defer stop()
	var deadline time.Time
	if d >= 0 {
		deadline = time.Now().Add(d)
	}
	ln.SetDeadline(deadline)
	return ln.Accept()
}

// interruptOn sets a deadline in the past through set when ctx ends (the
// process was killed): the blocked call returns. stop undoes the watch.
func interruptOn(ctx context.Context, set func(time.Time)) (stop func() bool) {
	return context.AfterFunc(ctx, func() { set(time.Unix(1, 0)) })
}

// sockError words a failed accept, read or write: "closed", "timeout",
// or the system's message.
func sockError(so *socket, err error) error {
	switch {
	case so.closed.Load(), errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF):
		return errClosed
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return errClosed
	}
	return netError(err)
}

// closeFunc is c:close() and l:close(): true.
func (s *Service) closeFunc(L *lua.LState) int {
	ud := L.CheckUserData(1)
	h, ok := ud.Value.(*handle)
	if !ok {
		L.ArgError(1, "a listener or connection expected")
	}
	if h.moved {
		L.Push(lua.LNil)
		L.Push(lua.LString(errMoved.Error()))
		return 2
	}
	h.so.ownerMu.Lock()
	if h.so.stopOwner != nil {
		h.so.stopOwner()
	}
	h.so.ownerMu.Unlock()
	h.so.close()
	L.Push(lua.LTrue)
	return 1
}

// settimeoutFunc is c:settimeout(seconds): reads and writes that wait
// longer answer nil, "timeout"; nil or a negative number: no timeout.
func (s *Service) settimeoutFunc(L *lua.LState) int {
	h, ok := s.checkHandle(L, "c:settimeout", false)
	if !ok {
		return 2
	}
	v := L.Get(2)
	if n, isNum := v.(lua.LNumber); isNum && n < 0 {
		v = lua.LNil
	}
	d, err := seconds(v, -1)
	if err != nil {
		L.ArgError(2, err.Error())
	}
	h.so.timeout.Store(int64(d))
	L.Push(lua.LTrue)
	return 1
}

// deadline is the deadline of an operation starting now.
func (so *socket) deadline() time.Time {
	if d := time.Duration(so.timeout.Load()); d >= 0 {
		return time.Now().Add(d)
	}
	return time.Time{}
}

// readFunc is c:read(fmt): "l", "L", "a" (with or without '*'), or n.
func (s *Service) readFunc(L *lua.LState) int {
	h, ok := s.checkHandle(L, "c:read", false)
	if !ok {
		return 2
	}
	var format any = "l"
	switch v := L.Get(2).(type) {
	case *lua.LNilType:
	case lua.LNumber:
		n := int64(v)
		if float64(n) != float64(v) || n < 1 {
			L.ArgError(2, "a count of at least 1 expected")
		}
		format = min(n, maxRead)
	case lua.LString:
		f := strings.TrimPrefix(string(v), "*")
		if f == "" || !strings.Contains("lLa", f[:1]) {
			L.ArgError(2, `invalid format (expected "l", "L", "a" or a count)`)
		}
		format = f[:1]
	default:
		L.ArgError(2, "format expected, got "+v.Type().String())
	}
	if data, ok := h.so.buffered(format); ok {
		L.Push(lua.LString(data))
		return 1
	}
	return s.host.Caller(L).Block(L, "c:read", cmdRead, h.so, format)
}

// buffered answers a read from what the connection's buffer holds, if
// that is the whole answer and no other read is in flight: a line
// already received, or some bytes for a count — after one inline read
// of what the socket holds (readNow) if the buffer alone does not do.
// The read then needs no command (no yield, no goroutine); "a" always
// waits for the end.
func (so *socket) buffered(format any) (string, bool) {
	if !so.readMu.TryLock() {
		return "", false
	}
	defer so.readMu.Unlock()
	if data, ok := so.answer(format); ok {
		return data, true
	}
	if format == "a" {
		return "", false
	}
	so.readNow()
	return so.answer(format)
}

// answer is buffered's answer from the buffer as it stands.
func (so *socket) answer(format any) (string, bool) {
	switch f := format.(type) {
	case int64:
		if len(so.buf) > 0 {
			return so.take(min(int(f), len(so.buf))), true
		}
	case string:
		if f == "a" {
			return "", false
		}
		if end := bytes.IndexByte(so.buf, '\n'); end >= 0 {
			line := so.take(end + 1)
			if f == "l" {
				line = strings.TrimSuffix(line[:end], "\r")
			}
			return line, true
		}
	}
	return "", false
}

// read runs a read on its goroutine. The read lock is let go before
// the requester resumes: its next read may be an inline one (buffered),
// whose TryLock must not meet the lock of a read that has finished.
func (s *Service) read(c scheduler.Call) error {
	so, format := c.Args[0].(*socket), c.Args[1]
	s.goRun(func() {
		data, err := so.readLocked(c.Ctx, format)
		if err != nil {
			c.Fail(err)
			return
		}
		c.Complete(data)
	})
	return nil
}

// readLocked waits for a read's answer, holding readMu; a kill of the
// process (ctx) ends the wait.
func (so *socket) readLocked(ctx context.Context, format any) (string, error) {
	so.readMu.Lock()
	defer so.readMu.Unlock()
	stop := interruptOn(ctx, func(t time.Time) { so.conn.SetReadDeadline(t) })
	defer stop()
	so.conn.SetReadDeadline(so.deadline())
	if n, ok := format.(int64); ok {
		return so.readCount(int(n))
	}
	return so.readFormat(format.(string))
}

// fill reads once more into the buffer; false at the end or on an error.
func (so *socket) fill() error {
	if so.eof {
		return errClosed
	}
	so.grow()
	n, err := so.conn.Read(so.buf[len(so.buf):cap(so.buf)])
	so.buf = so.buf[:len(so.buf)+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		so.eof = true
	}
	return sockError(so, err)
}

// grow makes room in the buffer for a read of readChunk/2 bytes or more.
func (so *socket) grow() {
	if cap(so.buf)-len(so.buf) < readChunk/2 {
		nb := make([]byte, len(so.buf), len(so.buf)+readChunk)
		copy(nb, so.buf)
		so.buf = nb
	}
}

// take removes and returns the first n buffered bytes.
func (so *socket) take(n int) string {
	s := string(so.buf[:n])
	rest := copy(so.buf, so.buf[n:])
	so.buf = so.buf[:rest]
	if rest == 0 && cap(so.buf) > 4*readChunk {
		so.buf = nil
	}
	return s
}

// readCount answers up to n bytes, waiting only if none are buffered.
func (so *socket) readCount(n int) (string, error) {
	for len(so.buf) == 0 {
		if err := so.fill(); err != nil {
			return "", err
		}
	}
	return so.take(min(n, len(so.buf))), nil
}

// readFormat answers a line ("l" without its end, "L" with it; the last
// line may lack one) or everything until the peer closes ("a").
func (so *socket) readFormat(f string) (string, error) {
	scanned := 0
	for {
		if f != "a" {
			if i := bytes.IndexByte(so.buf[scanned:], '\n'); i >= 0 {
				end := scanned + i
				line := so.take(end + 1)
				if f == "l" {
					line = strings.TrimSuffix(line[:end], "\r")
				}
				return line, nil
			}
			scanned = len(so.buf)
		}
		if len(so.buf) > maxRead {
			return "", fmt.Errorf("read larger than %d MiB", maxRead>>20)
		}
		err := so.fill()
		if err == errClosed && so.eof && len(so.buf) > 0 {
			return so.take(len(so.buf)), nil // the last line, or all
		}
		if err != nil {
			return "", err
		}
	}
}

// writeFunc is c:write(s, ...): true, or nil, err.
func (s *Service) writeFunc(L *lua.LState) int {
	h, ok := s.checkHandle(L, "c:write", false)
	if !ok {
		return 2
	}
	var b strings.Builder
	for i := 2; i <= L.GetTop(); i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			b.WriteString(string(v))
		case lua.LNumber:
			b.WriteString(v.String())
		default:
			L.ArgError(i, "string expected, got "+v.Type().String())
		}
	}
	data := b.String()
	if h.so.writeMu.TryLock() {
		n := h.so.writeNow(data)
		h.so.writeMu.Unlock()
		if n == len(data) {
			L.Push(lua.LTrue)
			return 1
		}
		data = data[n:]
	}
	return s.host.Caller(L).Block(L, "c:write", cmdWrite, h.so, data)
}

// write runs a write on its goroutine. As with read, the write lock is
// let go before the requester resumes, for its next inline write.
func (s *Service) write(c scheduler.Call) error {
	so, data := c.Args[0].(*socket), c.Args[1].(string)
	s.goRun(func() {
		if err := so.writeLocked(c.Ctx, data); err != nil {
			c.Fail(sockError(so, err))
			return
		}
		c.Complete(true)
	})
	return nil
}

// writeLocked writes all of data, holding writeMu; a kill of the process
// (ctx) ends the wait.
func (so *socket) writeLocked(ctx context.Context, data string) error {
	so.writeMu.Lock()
	defer so.writeMu.Unlock()
	stop := interruptOn(ctx, func(t time.Time) { so.conn.SetWriteDeadline(t) })
	defer stop()
	so.conn.SetWriteDeadline(so.deadline())
	_, err := io.WriteString(so.conn, data)
	return err
}

// netError drops Go's wrappers around a system error ("listen tcp
// 127.0.0.1:1: bind: permission denied" → "bind: permission denied").
func netError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		if se, ok := op.Err.(*os.SyscallError); ok {
			return fmt.Errorf("%s: %w", se.Syscall, se.Err)
		}
		return op.Err
	}
	return err
}
