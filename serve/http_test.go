package serve_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/luaproc"
)

const echoHandler = `
function echo(req)
  local keys = {}
  for k, v in pairs(req.query) do keys[#keys + 1] = k .. "=" .. v end
  table.sort(keys)
  return req.method .. " " .. req.path .. " " .. req.url .. " " .. table.concat(keys, "&") ..
    " " .. tostring(req.headers["x-test"]) .. " " .. req.headers.host .. " " .. req.body ..
    " " .. (req.remote:match("^127%.0%.0%.1:%d+$") and "remote" or req.remote)
end
`

// A request runs as a process with the request table; keep-alive
// connections are reused.
func TestServeRequestTable(t *testing.T) {
	e := start(t, serveScript("echo", "nil", echoHandler))
	addr := e.addr()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest("POST", "http://"+addr+"/a/b?y=2&x=1&x=3", strings.NewReader("BODY"))
	require.NoError(t, err)
	req.Header.Set("X-Test", "yes")
	resp, err := c.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "POST /a/b /a/b?y=2&x=1&x=3 x=1&y=2 yes "+addr+" BODY remote", string(b))

	reused := 0
	for range 3 {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			if i.Reused {
				reused++
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", "http://"+addr+"/", nil)
		resp, err := c.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	assert.Equal(t, 3, reused, "keep-alive: the connection is reused")
}

// A table is a response: status, headers (a list repeats the header),
// body; a response that is not one is a 500, logged.
func TestServeResponseTable(t *testing.T) {
	e := start(t, serveScript("h", "nil", `
function h(req)
  if req.path == "/bad" then return {status = "x"} end
  if req.path == "/none" then return end
  return {status = 201, headers = {["X-One"] = 1, ["Set-Cookie"] = {"a=1", "b=2"}, ["Content-Type"] = "application/json"}, body = "{}"}
end
`))
	addr := e.addr()
	resp, err := http.Get("http://" + addr + "/")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, "{}", string(b))
	assert.Equal(t, "1", resp.Header.Get("X-One"))
	assert.Equal(t, []string{"a=1", "b=2"}, resp.Header.Values("Set-Cookie"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	status, _ := get(t, nil, "http://"+addr+"/bad")
	assert.Equal(t, 500, status)
	assert.Contains(t, e.logs.String(), "status: an integer expected, got string")
	status, _ = get(t, nil, "http://"+addr+"/none")
	assert.Equal(t, 500, status)
	assert.Contains(t, e.logs.String(), "it returned nothing")
}

// A string answer is text/plain; charset=utf-8 whatever it holds (set
// by the server, or by net/http's sniffing where the body is sure to
// sniff as text), also to a HEAD request.
func TestServeStringContentType(t *testing.T) {
	bodies := []string{"hello", "", "<html><body>x</body></html>", "%PDF-1.4", "GIF89a", "PK\x03\x04",
		"binary\x00", strings.Repeat("a", 34) + "LP", "{\"a\": 1}", strings.Repeat("long ", 1000)}
	var lua strings.Builder
	lua.WriteString("local bodies = {")
	for _, b := range bodies {
		lua.WriteString(`"`)
		for _, c := range []byte(b) { // Lua 5.1 escapes: \ddd
			fmt.Fprintf(&lua, "\\%d", c)
		}
		lua.WriteString(`", `)
	}
	lua.WriteString("}\nfunction h(req) return bodies[tonumber(req.query.i)] end")
	e := start(t, serveScript("h", "nil", lua.String()))
	addr := e.addr()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for i, want := range bodies {
		for _, method := range []string{"GET", "HEAD"} {
			req, err := http.NewRequest(method, fmt.Sprintf("http://%s/?i=%d", addr, i+1), nil)
			require.NoError(t, err)
			resp, err := c.Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, 200, resp.StatusCode, "%s %q", method, want)
			assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), "%s %q", method, want)
			if method == "GET" {
				assert.Equal(t, int64(len(want)), resp.ContentLength, "%q", want)
				assert.Equal(t, want, string(b))
			}
		}
	}
}

// A handler that raises gets 500, and its error is logged once.
func TestServeHandlerRaises(t *testing.T) {
	e := start(t, serveScript("h", "nil", `function h(req) error("boom-" .. req.query.n) end`))
	addr := e.addr()
	status, body := get(t, nil, "http://"+addr+"/?n=17")
	assert.Equal(t, 500, status)
	assert.Equal(t, "internal server error\n", body)
	assert.Equal(t, 1, strings.Count(e.logs.String(), "boom-17"), e.logs.String())
	status, _ = get(t, nil, "http://"+addr+"/?n=18") // still serving
	assert.Equal(t, 500, status)
}

// A body over max_body is 413 (announced or chunked), and the server
// goes on.
func TestServeMaxBody(t *testing.T) {
	e := start(t, serveScript("h", "{max_body = 10}", `function h(req) return "got " .. #req.body end`))
	addr := e.addr()
	post := func(body io.Reader) int {
		resp, err := http.Post("http://"+addr+"/", "text/plain", body)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 413, post(strings.NewReader(strings.Repeat("x", 11))))
	assert.Equal(t, 413, post(io.MultiReader(strings.NewReader(strings.Repeat("x", 11))))) // chunked
	assert.Equal(t, 200, post(strings.NewReader(strings.Repeat("x", 10))))
	status, body := get(t, nil, "http://"+addr+"/")
	assert.Equal(t, 200, status)
	assert.Equal(t, "got 0", body)
}

// rawRequest writes raw on a new connection and returns the status line
// of the answer.
func rawRequest(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(hung))
	_, err = io.WriteString(c, raw)
	require.NoError(t, err)
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

// Malformed requests are answered by net/http (or 400 for a query that
// does not decode) without reaching Lua, and the server goes on serving.
func TestServeMalformedRequests(t *testing.T) {
	e := start(t, serveScript("h", "{max_header_bytes = 4096}", `function h(req) return "ok" end`))
	addr := e.addr()
	before := e.rt.Stats().Started
	for _, c := range []struct{ raw, want string }{
		{"GARBAGE\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"}, // no Host
		{"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET / HTTP/9.9\r\nHost: x\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported"},
		{"GET /?a=%zz HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 10000) + "\r\n\r\n", "HTTP/1.1 431 Request Header Fields Too Large"},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", "HTTP/1.1 400 Bad Request"},
	} {
		assert.Equal(t, c.want, rawRequest(t, addr, c.raw)[:len(c.want)], "%q", c.raw)
		assert.Equal(t, "HTTP/1.1 200 OK", rawRequest(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "after %q", c.raw)
	}
	assert.Equal(t, uint64(7), e.rt.Stats().Started-before, "only the good requests ran a process")
}

// waitClosed waits until the server closes c (a read ends).
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(hung))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if err != nil && (!strings.Contains(err.Error(), "reset") && (!asNetErr(err, &ne) || ne.Timeout())) {
		t.Fatalf("the server did not close the connection: %v", err)
	}
}

func asNetErr(err error, ne *net.Error) bool {
	x, ok := err.(net.Error)
	if ok {
		*ne = x
	}
	return ok
}

// Slow clients (slowloris: headers that never end, an idle keep-alive
// connection) are disconnected by read_timeout and idle_timeout, while
// others are served.
func TestServeSlowClients(t *testing.T) {
	e := start(t, serveScript("h", "{read_timeout = 0.3, idle_timeout = 0.3}", `function h(req) return "ok" end`))
	addr := e.addr()
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	_, err = io.WriteString(slow, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	require.NoError(t, err)
	status, _ := get(t, nil, "http://"+addr+"/")
	assert.Equal(t, 200, status, "served while a slow client holds a connection")
	waitClosed(t, slow)

	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	_, err = io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(idle)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	assert.Equal(t, 200, resp.StatusCode)
	waitClosed(t, idle) // idle past idle_timeout
}

// A handler past the timeout is killed and answered 503.
func TestServeTimeoutKills(t *testing.T) {
	e := start(t, serveScript("h", "{timeout = 0.2}", `
function h(req)
  process.send(tonumber(req.headers["x-inbox"]), process.self())
  process.receive()
end`))
	addr := e.addr()
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("X-Inbox", strconv.Itoa(int(e.in.PID())))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, "request timed out\n", string(b))
	pid := e.recv().Value.(int64)
	assert.Contains(t, e.logs.String(), fmt.Sprintf("request timed out after 200ms: killed pid=%d", pid))
	waitFor(t, "the handler killed", func() bool { return e.rt.Stats().Killed == 1 })
	_, alive := e.rt.Lookup(luaproc.PID(pid))
	assert.False(t, alive)
}

// waitFor polls cond (a counter the runtime keeps) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hung)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// blockedRequest starts a GET whose handler reports its PID and waits for
// a message; it returns the handler's PID and the response's channel.
func blockedRequest(t *testing.T, e *env, addr string) (luaproc.PID, chan *http.Response) {
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("X-Inbox", strconv.Itoa(int(e.in.PID())))
	ch := make(chan *http.Response, 1)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		resp, err := c.Do(req)
		if err != nil {
			resp = &http.Response{StatusCode: -1, Status: err.Error(), Body: io.NopCloser(strings.NewReader(""))}
		}
		ch <- resp
	}()
	m := e.recv()
	return luaproc.PID(m.Value.(int64)), ch
}

const blockingHandler = `
function h(req)
  process.send(tonumber(req.headers["x-inbox"]), process.self())
  return process.receive()
end`

// Beyond max_concurrent, a request is answered 503 at once.
func TestServeMaxConcurrent(t *testing.T) {
	e := start(t, serveScript("h", "{max_concurrent = 1}", blockingHandler))
	addr := e.addr()
	pid, first := blockedRequest(t, e, addr)
	status, body := get(t, nil, "http://"+addr+"/")
	assert.Equal(t, 503, status)
	assert.Equal(t, "server busy\n", body)
	require.NoError(t, e.in.Send(pid, "done"))
	resp := <-first
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "done", string(b))
}

// refused waits until a connection to addr is refused (the listener is
// closed), as an event: each try is answered at once.
func refused(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(hung)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s still accepts connections", addr)
}

// srv:close() stops accepting at once, answers the requests in flight,
// and returns once they are done.
func TestServeCloseDrains(t *testing.T) {
	e := start(t, serveScript("h", "nil", blockingHandler))
	addr := e.addr()
	pid, inFlight := blockedRequest(t, e, addr)
	require.NoError(t, e.in.Send(e.main.PID(), "close"))
	refused(t, addr)
	require.NoError(t, e.in.Send(pid, "finished"))
	resp := <-inFlight
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 200, resp.StatusCode, resp.Status)
	assert.Equal(t, "finished", string(b))
	assert.Equal(t, "true", e.recv().Value, "srv:close() returns true once drained")
}

// The runtime's shutdown drains the servers first: a request in flight
// (whose handler waits for a message, so processes still run) is
// answered; new connections are refused meanwhile.
func TestServeShutdownDrains(t *testing.T) {
	e := start(t, serveScript("h", "nil", blockingHandler))
	addr := e.addr()
	pid, inFlight := blockedRequest(t, e, addr)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hung)
		defer cancel()
		done <- e.rt.Shutdown(ctx)
	}()
	e.down = true
	refused(t, addr)
	require.NoError(t, e.in.Send(pid, "answered"))
	resp := <-inFlight
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 200, resp.StatusCode, resp.Status)
	assert.Equal(t, "answered", string(b))
	require.NoError(t, <-done)
}

// The server closes when the process that started it ends.
func TestServeClosesWithOwner(t *testing.T) {
	e := start(t, serveScript("h", "nil", `function h() return "ok" end`))
	addr := e.addr()
	status, _ := get(t, nil, "http://"+addr+"/")
	assert.Equal(t, 200, status)
	require.NoError(t, e.in.Send(e.main.PID(), "return"))
	<-e.main.Done()
	refused(t, addr)
}

// TLS with a generated certificate.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	pool := writeCert(t, dir)
	e := start(t, serveScript("h", fmt.Sprintf("{tls = {cert = %q, key = %q}}", filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")),
		`function h(req) return "secure " .. req.path end`))
	addr := e.addr()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	status, body := get(t, c, "https://"+addr+"/x")
	assert.Equal(t, 200, status)
	assert.Equal(t, "secure /x", body)
	// plain HTTP on the TLS port is refused, and the server goes on
	status, _ = get(t, nil, "http://"+addr+"/x")
	assert.Equal(t, 400, status)
	status, _ = get(t, c, "https://"+addr+"/y")
	assert.Equal(t, 200, status)
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// in dir and returns a pool that trusts it.
func writeCert(t *testing.T, dir string) *x509.CertPool {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "luarun test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// Without the listen permission, http.serve raises; http.serve is there
// (and works) without the http permission.
func TestServePermissions(t *testing.T) {
	e := start(t, `function main(inbox) process.send(inbox, select(2, pcall(http.serve, "127.0.0.1:0", "main"))) end`, "http")
	assert.Equal(t, "http.serve: listen is not allowed (run without --sandbox or with --allow listen)", fmt.Sprint(e.recv().Value))
	e2 := start(t, serveScript("h", "nil", `function h() return "ok" end`), "listen")
	status, _ := get(t, nil, "http://"+e2.addr()+"/")
	assert.Equal(t, 200, status)
	e3 := start(t, `function main(inbox) process.send(inbox, select(2, pcall(function() return http.get end))) end`, "listen")
	assert.Contains(t, fmt.Sprint(e3.recv().Value), "http is not allowed")
}

// Bad arguments raise; an unknown entry and an address in use are nil, err.
func TestServeArguments(t *testing.T) {
	e := start(t, `
function h() end
function main(inbox)
  local l = assert(net.listen("127.0.0.1:0"))
  local out = {}
  out[1] = select(2, pcall(http.serve, "127.0.0.1:0", "h", {timeout = "x"}))
  out[2] = select(2, http.serve("127.0.0.1:0", "nope"))
  out[3] = select(2, http.serve(l.addr, "h"))
  out[4] = select(2, pcall(http.serve, "127.0.0.1:0", "h", {max_body = -1}))
  process.send(inbox, out)
end`)
	out := e.recv().Value.([]any)
	assert.Contains(t, out[0], "timeout: number expected, got string")
	assert.Contains(t, out[1], "http.serve: ")
	assert.Contains(t, out[1], "nope")
	assert.Contains(t, out[2], "address already in use")
	assert.Contains(t, out[3], "max_body: a non-negative integer expected")
}

var _ = luaproc.Message{}

// An empty query is an empty JSON object (as an empty map converts); a
// long string answer carries its Content-Length (a short one gets it
// from net/http), never chunked.
func TestServeQueryAndLength(t *testing.T) {
	e := start(t, serveScript("h", "nil", `
function h(req)
  if req.path == "/long" then return string.rep("x", 5000) end
  return json.encode(req.query)
end`))
	addr := e.addr()
	for _, tc := range []struct{ path, body string }{{"/", "{}"}, {"/?a=1&a=2&b", `{"a":"1","b":""}`}} {
		code, body := get(t, http.DefaultClient, "http://"+addr+tc.path)
		require.Equal(t, 200, code)
		require.Equal(t, tc.body, body)
	}
	for _, path := range []string{"/", "/long"} {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.EqualValues(t, len(b), resp.ContentLength, path)
		require.Empty(t, resp.TransferEncoding, path)
	}
}
