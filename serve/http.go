package serve

// http.serve: an HTTP/1.1 server on Go's net/http (keep-alive, TLS by
// crypto/tls; parsing, limits on headers, timeouts on reading and idle
// connections are net/http's). Each request runs as a new process of
// the server's entry with the request table; the process's first return
// value is the response. The runtime runs the process's first steps on
// the connection's goroutine (Caller.Starter), so a handler that does not
// block has answered when the start returns: no hand-off to a worker and
// back, no timer.
//
// A request reaches Lua only if it is well formed (net/http answers 400
// or 431 itself; a query that does not decode is answered 400 here), its
// body fits max_body (413) and fewer than max_concurrent requests are
// running (503 at once). A handler that raises is answered 500 and
// logged here, once (the server waits on its request processes, so the
// runtime's crash report stays silent); one that runs past the timeout
// is killed, logged and answered 503.
//
// Closing (srv:close(), the owner's end, the runtime's Shutdown) is
// http.Server.Shutdown: the listener closes at once (new connections are
// refused), idle keep-alive connections close, and the requests in
// flight finish; past the drain's deadline the remaining connections are
// closed. Every way of closing waits for the same drain.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/luaproc/lualib"
	"github.com/luarun/luarun/optcheck"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

const cmdServerClose = "http:close"

// Defaults of http.serve's options.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultMaxBody        = 8 << 20
	DefaultReadTimeout    = 30 * time.Second
	DefaultIdleTimeout    = 120 * time.Second
	// drainGrace is added to the request timeout to bound the drain of a
	// server closed by srv:close() or by its owner's end: no request
	// outlives its timeout, only a slow client reading the answer does.
	drainGrace = 5 * time.Second
)

// serverOpts are http.serve's options.
type serverOpts struct {
	timeout        time.Duration // per request; < 0: none
	maxBody        int64
	maxHeaderBytes int
	readTimeout    time.Duration // < 0: none
	idleTimeout    time.Duration // < 0: none
	maxConcurrent  int           // 0: no bound
	cert, key      string        // TLS when set
}

// serveOptions are the keys of http.serve's options table.
var serveOptions = []string{"idle_timeout", "max_body", "max_concurrent", "max_header_bytes", "read_timeout", "timeout", "tls"}

// readServeOpts reads http.serve's options table (nil: the defaults).
func readServeOpts(t *lua.LTable) (serverOpts, error) {
	o := serverOpts{maxBody: DefaultMaxBody}
	if err := lualib.CheckOptions(t, serveOptions...); err != nil {
		return o, err
	}
	get := func(k string) lua.LValue {
		if t == nil {
			return lua.LNil
		}
		return t.RawGetString(k)
	}
	var err error
	durations := []struct {
		key string
		dst *time.Duration
		def time.Duration
	}{{"timeout", &o.timeout, DefaultRequestTimeout}, {"read_timeout", &o.readTimeout, DefaultReadTimeout}, {"idle_timeout", &o.idleTimeout, DefaultIdleTimeout}}
	for _, d := range durations {
		if *d.dst, err = seconds(get(d.key), d.def); err != nil {
			return o, fmt.Errorf("%s: %w", d.key, err)
		}
	}
	ints := []struct {
		key string
		dst *int64
	}{{"max_body", &o.maxBody}}
	for _, n := range ints {
		if *n.dst, err = count(get(n.key), *n.dst); err != nil {
			return o, fmt.Errorf("%s: %w", n.key, err)
		}
	}
	mh, err := count(get("max_header_bytes"), 0)
	if err != nil {
		return o, fmt.Errorf("max_header_bytes: %w", err)
	}
	mc, err := count(get("max_concurrent"), 0)
	if err != nil {
		return o, fmt.Errorf("max_concurrent: %w", err)
	}
	o.maxHeaderBytes, o.maxConcurrent = int(mh), int(mc)
	if o.cert, o.key, err = tlsOpts(get("tls")); err != nil {
		return o, fmt.Errorf("tls: %w", err)
	}
	return o, nil
}

// count reads a non-negative integer (nil: def).
func count(v lua.LValue, def int64) (int64, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return def, nil
	case lua.LNumber:
		f := float64(x)
		if f < 0 || f != float64(int64(f)) || f > 1<<53 {
			return 0, fmt.Errorf("a non-negative integer expected, got %v", f)
		}
		return int64(f), nil
	}
	return 0, fmt.Errorf("number expected, got %s", v.Type())
}

// tlsOpts reads tls = {cert = file, key = file}.
func tlsOpts(v lua.LValue) (cert, key string, err error) {
	if v == lua.LNil {
		return "", "", nil
	}
	t, ok := v.(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("table expected, got %s", v.Type())
	}
	if err := lualib.CheckOptions(t, "cert", "key"); err != nil {
		return "", "", err
	}
	c, ok1 := t.RawGetString("cert").(lua.LString)
	k, ok2 := t.RawGetString("key").(lua.LString)
	if !ok1 || !ok2 {
		return "", "", errors.New("cert and key (file names) expected")
	}
	return string(c), string(k), nil
}

// server is one http.serve's server.
type server struct {
	svc   *Service
	entry string
	start StartFunc
	opts  serverOpts
	http  *http.Server
	addr  string
	sem   chan struct{} // running requests; nil: no bound
	log   *slog.Logger

	// stopOwner stops the owner's AfterFunc (drain stops it).
	stopOwner func() bool

	closeOnce sync.Once
	closed    chan struct{} // closed once the drain finished
}

// serve is http.serve(addr, entry [, opts]) → srv, or nil, err.
func (s *Service) serve(L *lua.LState) int {
	s.checkAllowed(L, "http.serve", "listen")
	addr := L.CheckString(1)
	entry := L.CheckString(2)
	opts, err := readServeOpts(L.OptTable(3, nil))
	var unknown *optcheck.UnknownError
	if errors.As(err, &unknown) { // "http.serve: unknown option ...", as the others say it
		L.RaiseError("http.serve: %v", err)
	}
	if err != nil {
		L.ArgError(3, err.Error())
	}
	c := s.host.Caller(L)
	if err := c.CheckEntry(entry); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString("http.serve: " + err.Error()))
		return 2
	}
	srv, err := s.newServer(addr, entry, opts, c)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(fmt.Sprintf("http.serve %s: %v", addr, netError(err))))
		return 2
	}
	L.Push(&lua.LUserData{Value: srv, Metatable: s.mts.server})
	return 1
}

// newServer listens on addr and starts serving; the server closes when
// c's process ends.
func (s *Service) newServer(addr, entry string, o serverOpts, c Caller) (*server, error) {
	var cfg *tls.Config
	if o.cert != "" {
		pair, err := tls.LoadX509KeyPair(o.cert, o.key)
		if err != nil {
			return nil, fmt.Errorf("loading the TLS certificate: %w", err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}}
	}
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return nil, errors.New("the runtime is shutting down")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &server{svc: s, entry: entry, start: c.Starter(), opts: o, addr: ln.Addr().String(),
		log: s.host.Logger(), closed: make(chan struct{})}
	if o.maxConcurrent > 0 {
		srv.sem = make(chan struct{}, o.maxConcurrent)
	}
	srv.http = &http.Server{
		Handler:        srv,
		ReadTimeout:    positive(o.readTimeout),
		IdleTimeout:    positive(o.idleTimeout),
		MaxHeaderBytes: o.maxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(srv.log.Handler(), slog.LevelDebug),
		// HTTP/1.1 only, also over TLS (the contract's server).
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	s.mu.Lock()
	s.servers[srv] = true
	s.mu.Unlock()
	s.goRun(func() { srv.http.Serve(ln) })
	srv.stopOwner = context.AfterFunc(c.Context(), func() {
		s.goRun(func() { srv.drain(context.Background()) })
	})
	return srv, nil
}

// positive is d, with "none" (< 0) as net/http's 0.
func positive(d time.Duration) time.Duration {
	return max(d, 0)
}

// drain shuts the server down: no new connections, the requests in
// flight finish. It waits until ctx is done or the server's own bound
// (the request timeout plus a grace) passes, then closes what is left.
// Several drains may run at once; each returns once the server is closed.
func (srv *server) drain(ctx context.Context) {
	srv.closeOnce.Do(func() {
		srv.stopOwner()
		go func() {
			defer close(srv.closed)
			dctx, cancel := context.WithCancel(context.Background())
			if srv.opts.timeout >= 0 {
				dctx, cancel = context.WithTimeout(dctx, srv.opts.timeout+drainGrace)
			}
			defer cancel()
			if err := srv.http.Shutdown(dctx); err != nil {
				srv.http.Close()
			}
			srv.svc.mu.Lock()
			delete(srv.svc.servers, srv)
			srv.svc.mu.Unlock()
		}()
	})
	select {
	case <-srv.closed:
	case <-ctx.Done():
		srv.http.Close() // the caller's bound (the runtime's shutdown) is shorter
		<-srv.closed
	}
}

// serverClose is srv:close(): it answers true once the server drained.
func (s *Service) serverClose(c scheduler.Call) error {
	srv, ok := c.Args[0].(*server)
	if !ok {
		return errors.New("srv:close: a server expected")
	}
	s.goRun(func() {
		srv.drain(context.Background())
		c.Complete(true)
	})
	return nil
}

// ServeHTTP runs one request as a process.
func (srv *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if srv.sem != nil {
		select {
		case srv.sem <- struct{}{}:
			defer func() { <-srv.sem }()
		default:
			http.Error(w, "server busy", http.StatusServiceUnavailable)
			return
		}
	}
	req, status, msg := srv.request(w, r)
	if status != 0 {
		http.Error(w, msg, status)
		return
	}
	req.argv[0] = req
	h, err := srv.start(srv.entry, req.argv[:]...)
	if err != nil {
		srv.log.Warn("http.serve: the request's process did not start", "addr", srv.addr, "err", err)
		http.Error(w, "server unavailable", http.StatusServiceUnavailable)
		return
	}
	if !srv.await(r, h) {
		http.Error(w, "request timed out", http.StatusServiceUnavailable)
		return
	}
	res, err := h.Result()
	switch {
	case errors.Is(err, scheduler.ErrShutdown):
		http.Error(w, "server shutting down", http.StatusServiceUnavailable)
	case err != nil:
		srv.log.Error("http.serve: the handler failed", "pid", int64(h.PID()), "entry", srv.entry,
			"method", r.Method, "path", r.URL.Path, "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
	default:
		srv.respond(w, h.PID(), res)
	}
}

// await waits for request process h to end; past the timeout it kills
// it and returns false (so does a client gone away).
func (srv *server) await(r *http.Request, h scheduler.Handle) bool {
	select {
	case <-h.Done(): // it ran inline and answered (no timer to make)
		return true
	default:
	}
	var expired <-chan time.Time
	if srv.opts.timeout >= 0 {
		t := time.NewTimer(srv.opts.timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-h.Done():
		return true
	case <-expired:
		reason := fmt.Sprintf("request timed out after %v", srv.opts.timeout)
		srv.log.Warn("http.serve: "+reason+": killed", "pid", int64(h.PID()), "method", r.Method, "path", r.URL.Path)
		srv.svc.host.Kill(h.PID(), reason)
		return false
	case <-r.Context().Done():
		srv.svc.host.Kill(h.PID(), "the client closed the connection")
		return false
	}
}

// Request is a request as its process gets it: the runtime makes the
// Lua request table straight from it (no Go maps on the way). Query
// holds every pair in order (the table keeps each key's first value);
// Headers has lower-case names and the values of one name joined by
// ", ".
type Request struct {
	Method, Path, URL, Body, Remote string
	Query, Headers                  []Field

	// fields holds Query and then Headers when they fit (a request with a
	// query pair and three headers, curl's): one allocation, not three.
	fields [4]Field
	// argv is the start's argument list, the request itself: the list
	// lives in the request's allocation, not one of its own.
	argv [1]any
}

// Field is a name and its value.
type Field struct{ Name, Value string }

// Table is the request table as a payload value (for a host that does
// not make it from the Request itself).
func (r *Request) Table() map[string]any {
	query := make(map[string]any, len(r.Query))
	for _, f := range r.Query {
		if _, seen := query[f.Name]; !seen {
			query[f.Name] = f.Value
		}
	}
	headers := make(map[string]any, len(r.Headers))
	for _, f := range r.Headers {
		headers[f.Name] = f.Value
	}
	return map[string]any{
		"method": r.Method, "path": r.Path, "url": r.URL,
		"query": query, "headers": headers, "body": r.Body, "remote": r.Remote,
	}
}

// request builds the request, or a status and message to answer without
// running Lua.
func (srv *server) request(w http.ResponseWriter, r *http.Request) (*Request, int, string) {
	body, status, msg := srv.body(w, r)
	if status != 0 {
		return nil, status, msg
	}
	req := &Request{Method: r.Method, Path: r.URL.Path, URL: r.RequestURI, Body: body, Remote: r.RemoteAddr}
	query, ok := appendQuery(req.fields[:0], r.URL.RawQuery)
	if !ok {
		return nil, http.StatusBadRequest, "bad request: malformed query"
	}
	req.Query = query[:len(query):len(query)] // the headers follow in fields
	headers := query[len(query):]
	for k, vs := range r.Header {
		headers = append(headers, Field{lowerHeader(k), strings.Join(vs, ", ")})
	}
	req.Headers = append(headers, Field{"host", r.Host})
	return req, 0, ""
}

// body reads the request's body, up to max_body (413 past it).
func (srv *server) body(w http.ResponseWriter, r *http.Request) (string, int, string) {
	if r.ContentLength > srv.opts.maxBody {
		return "", http.StatusRequestEntityTooLarge, "request body too large"
	}
	if r.Body == http.NoBody { // net/http's body of one known to be empty: nothing to read
		return "", 0, ""
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, srv.opts.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return "", http.StatusRequestEntityTooLarge, "request body too large"
		}
		return "", http.StatusBadRequest, "bad request: reading the body failed"
	}
	return string(b), 0, ""
}

// appendQuery appends url.ParseQuery's pairs, in order, to q; ok false
// where ParseQuery fails (a semicolon, a bad escape).
func appendQuery(q []Field, raw string) ([]Field, bool) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			return nil, false
		}
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		q = append(q, Field{k, v})
	}
	return q, true
}

// lowerHeader is a canonical header name in lower case, without
// allocating for the common ones.
func lowerHeader(k string) string {
	if l, ok := commonHeaders[k]; ok {
		return l
	}
	return strings.ToLower(k)
}

var commonHeaders = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control",
		"Connection", "Content-Length", "Content-Type", "Cookie", "Origin", "Referer", "User-Agent",
		"X-Forwarded-For", "X-Forwarded-Proto", "X-Real-Ip", "X-Request-Id"} {
		m[k] = strings.ToLower(k)
	}
	return m
}()

// respond writes the handler's return value: a string (200, text/plain)
// or {status=, headers=, body=}; anything else is answered 500 and
// logged.
func (srv *server) respond(w http.ResponseWriter, pid scheduler.PID, res payload.Payloads) {
	var v any
	if len(res) > 0 {
		v = res[0]
	}
	if s, ok := v.(string); ok {
		// A small one gets its Content-Length from net/http, and its
		// Content-Type too when it sniffs as text (sniff.go).
		if len(s) > smallBody || !sniffsAsText(s) {
			h := w.Header()
			h["Content-Type"] = textPlain
			if len(s) > smallBody {
				h["Content-Length"] = []string{strconv.Itoa(len(s))}
			}
		}
		io.WriteString(w, s)
		return
	}
	status, header, body, err := responseTable(v)
	if err != nil {
		srv.log.Error("http.serve: the handler's response is not one", "pid", int64(pid), "entry", srv.entry, "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	for k, vs := range header {
		h[k] = vs
	}
	if _, ok := h["Content-Type"]; !ok && body != "" {
		h["Content-Type"] = textPlain
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

var textPlain = []string{"text/plain; charset=utf-8"}

// smallBody: net/http buffers a response body up to this size before it
// sends the header, and sets Content-Length itself when the handler
// returns within it.
const smallBody = 2048

// responseTable reads {status=, headers=, body=}.
func responseTable(v any) (int, http.Header, string, error) {
	t, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return 0, nil, "", errors.New("it returned nothing (a string or {status=, headers=, body=} expected)")
		}
		return 0, nil, "", fmt.Errorf("a string or {status=, headers=, body=} expected, got %s", goType(v))
	}
	status := http.StatusOK
	switch x := t["status"].(type) {
	case nil:
	case int64:
		if x < 100 || x > 999 {
			return 0, nil, "", fmt.Errorf("status %d is not an HTTP status", x)
		}
		status = int(x)
	default:
		return 0, nil, "", fmt.Errorf("status: an integer expected, got %s", goType(x))
	}
	body, ok := t["body"].(string)
	if !ok && t["body"] != nil {
		return 0, nil, "", fmt.Errorf("body: a string expected, got %s", goType(t["body"]))
	}
	header, err := responseHeaders(t["headers"])
	return status, header, body, err
}

// responseHeaders reads headers = {name = value or {values...}}.
func responseHeaders(v any) (http.Header, error) {
	if v == nil {
		return nil, nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		if l, isList := v.([]any); isList && len(l) == 0 {
			return nil, nil // {} arrives as an empty list
		}
		return nil, fmt.Errorf("headers: a table of names expected, got %s", goType(v))
	}
	h := make(http.Header, len(t))
	for name, val := range t {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("headers: %q is not a header name", name)
		}
		vals, err := headerValues(val)
		if err != nil {
			return nil, fmt.Errorf("headers.%s: %w", name, err)
		}
		for _, s := range vals {
			if strings.ContainsAny(s, "\r\n\x00") {
				return nil, fmt.Errorf("headers.%s: a value must not hold CR, LF or NUL", name)
			}
			h.Add(name, s)
		}
	}
	return h, nil
}

// headerValues reads a header's value: a string, a number, or a list.
func headerValues(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case int64:
		return []string{strconv.FormatInt(x, 10)}, nil
	case float64:
		return []string{strconv.FormatFloat(x, 'g', 14, 64)}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, err := headerValues(e)
			if err != nil || len(s) != 1 {
				return nil, fmt.Errorf("a list of strings expected")
			}
			out = append(out, s[0])
		}
		return out, nil
	}
	return nil, fmt.Errorf("a string expected, got %s", goType(v))
}

// validHeaderName reports whether name is an RFC 7230 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// goType names a payload value's type the Lua way.
func goType(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case int64, float64:
		return "number"
	case bool:
		return "boolean"
	case []any, map[string]any, map[any]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

// serverIndex is a server's __index: srv.addr, srv:close.
func (s *Service) serverIndex(L *lua.LState) int {
	srv := L.CheckUserData(1).Value.(*server)
	switch L.CheckString(2) {
	case "addr":
		L.Push(lua.LString(srv.addr))
	case "close":
		L.Push(s.mts.serverClose)
	default:
		L.Push(lua.LNil)
	}
	return 1
}

// serverCloseFunc is srv:close(): it blocks until the server drained.
func (s *Service) serverCloseFunc(L *lua.LState) int {
	ud := L.CheckUserData(1)
	srv, ok := ud.Value.(*server)
	if !ok {
		L.ArgError(1, "a server expected (from http.serve)")
	}
	return s.host.Caller(L).Block(L, "srv:close", cmdServerClose, srv)
}
