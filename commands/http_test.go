package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/scheduler"
)

// testServer serves:
//
//	/status/{code}  that status, body "status {code}"
//	/echo           the method and body back; request header X-Foo as
//	                X-Echo-Foo; X-Multi twice
//	/big            bigBody (chunked: no Content-Length)
//	/sized          2,048 bytes with a Content-Length
//	/endless        zeros until the client goes away
//	/slow           nothing until the request is cancelled
//	/hold           like /slow, telling held when the request arrived and
//	                cancelled when its context ended
type testServer struct {
	*httptest.Server
	bigBody   []byte
	held      chan struct{}
	cancelled chan struct{}
	conns     atomic.Int64 // connections accepted
}

func newTestServer(t *testing.T) *testServer {
	ts := &testServer{
		bigBody:   make([]byte, 10<<20),
		held:      make(chan struct{}, 1),
		cancelled: make(chan struct{}, 1),
	}
	rand.NewChaCha8([32]byte{1}).Read(ts.bigBody)
	mux := http.NewServeMux()
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo-Foo", r.Header.Get("X-Foo"))
		w.Header().Set("X-Echo-Host", r.Host)
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		fmt.Fprintf(w, "%s %s", r.Method, body)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(ts.bigBody)
	})
	mux.HandleFunc("/sized", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2048")
		w.Write(make([]byte, 2048))
	})
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 32<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// The server sees the connection close (and cancels the context)
		// only once the body was read.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		ts.held <- struct{}{}
		<-r.Context().Done()
		ts.cancelled <- struct{}{}
	})
	ts.Server = httptest.NewUnstartedServer(mux)
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			ts.conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// response checks that h's call returned a response and gives it.
func response(t *testing.T, h scheduler.Handle) map[string]any {
	t.Helper()
	got, err := result(h)
	require.NoError(t, err)
	resp, ok := got.(map[string]any)
	require.True(t, ok, "a response table, got %T", got)
	return resp
}

func TestHTTPStatus(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)
	for _, code := range []int64{200, 404, 500} {
		h, _ := call(t, s, "http.get", fmt.Sprintf("%s/status/%d", ts.URL, code))
		resp := response(t, h)
		assert.Equal(t, code, resp["status"])
		assert.Equal(t, fmt.Sprint("status ", code), resp["body"])
	}
}

func TestHTTPHeadersAndBody(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)

	h, _ := call(t, s, "http.get", ts.URL+"/echo", map[string]any{
		"headers": map[string]any{"X-Foo": "bar", "host": "example.test"},
		"timeout": int64(5),
	})
	resp := response(t, h)
	assert.Equal(t, int64(200), resp["status"])
	assert.Equal(t, "GET ", resp["body"])
	headers := resp["headers"].(map[string]any)
	assert.Equal(t, "bar", headers["x-echo-foo"])
	assert.Equal(t, "example.test", headers["x-echo-host"])
	assert.Equal(t, "a, b", headers["x-multi"])
	assert.Equal(t, "text/plain; charset=utf-8", headers["content-type"])

	// {} arrives as an empty list: no options
	h, _ = call(t, s, "http.get", ts.URL+"/echo", []any{})
	assert.Equal(t, "GET ", response(t, h)["body"])

	// a POST with a binary body; the method's case does not matter
	h, _ = call(t, s, "http.request", map[string]any{
		"method":  "post",
		"url":     ts.URL + "/echo",
		"body":    "a\x00b",
		"headers": []any{},
	})
	resp = response(t, h)
	assert.Equal(t, "POST a\x00b", resp["body"])

	// method defaults to GET; map[any]any tables are accepted
	h, _ = call(t, s, "http.request", map[any]any{"url": ts.URL + "/echo", "headers": map[any]any{"X-Foo": int64(7)}})
	resp = response(t, h)
	assert.Equal(t, "GET ", resp["body"])
	assert.Equal(t, "7", resp["headers"].(map[string]any)["x-echo-foo"])
}

func TestHTTPBigBody(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)
	h, _ := call(t, s, "http.get", ts.URL+"/big")
	resp := response(t, h)
	body := resp["body"].(string)
	assert.Len(t, body, len(ts.bigBody))
	assert.True(t, bytes.Equal([]byte(body), ts.bigBody), "the 10 MB body arrives intact")
}

// TestHTTPReuse: calls one after the other use one connection.
func TestHTTPReuse(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)
	for range 20 {
		h, _ := call(t, s, "http.get", ts.URL+"/status/200")
		assert.Equal(t, int64(200), response(t, h)["status"])
	}
	assert.Equal(t, int64(1), ts.conns.Load())
}

func TestHTTPConcurrent(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			h, _ := call(t, s, "http.get", fmt.Sprintf("%s/status/%d", ts.URL, 200+i%2))
			resp, err := result(h)
			if err == nil && resp.(map[string]any)["status"] != int64(200+i%2) {
				err = fmt.Errorf("call %d: %v", i, resp)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestHTTPErrors(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)

	// a timeout
	h, took := call(t, s, "http.get", ts.URL+"/slow", map[string]any{"timeout": 0.1})
	_, err := result(h)
	assert.EqualError(t, err, "http.get "+ts.URL+"/slow: timed out after 100ms")
	assert.Less(t, took, 3*time.Second)
	h, _ = call(t, s, "http.request", map[string]any{"url": ts.URL + "/slow", "method": "PUT", "body": "x", "timeout": 0.05})
	_, err = result(h)
	assert.EqualError(t, err, "http.request PUT "+ts.URL+"/slow: timed out after 50ms")

	// a refused connection: a port that was just closed
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/"
	require.NoError(t, ln.Close())
	h, _ = call(t, s, "http.get", dead)
	_, err = result(h)
	assert.EqualError(t, err, "http.get "+dead+": connection refused")
	// no password in errors
	withUser := "http://user:secret@" + ln.Addr().String() + "/"
	h, _ = call(t, s, "http.get", withUser)
	_, err = result(h)
	assert.EqualError(t, err, "http.get http://user:xxxxx@"+ln.Addr().String()+"/: connection refused")
	h, _ = call(t, s, "http.request", map[string]any{"url": withUser, "method": "delete"})
	_, err = result(h)
	assert.EqualError(t, err, "http.request DELETE http://user:xxxxx@"+ln.Addr().String()+"/: connection refused")

	for _, tc := range []struct {
		cmd  string
		args []any
		want string
	}{
		{"http.get", []any{"example.com/x"}, "http.get example.com/x: invalid URL: http:// or https:// expected"},
		{"http.get", []any{"ftp://example.com/"}, `http.get ftp://example.com/: invalid URL: scheme "ftp" is not http or https`},
		{"http.get", []any{"http://"}, "http.get http://: invalid URL: no host"},
		{"http.get", []any{"http://a b/"}, `http.get http://a b/: invalid URL: invalid character " " in host name`},
		{"http.request", []any{map[string]any{"url": ts.URL, "method": "GE T"}}, `http.request GE T ` + ts.URL + `: net/http: invalid method "GE T"`},
		{"http.get", []any{int64(5)}, "http.get 5: invalid URL: http:// or https:// expected"}, // a number is a string
		{"http.get", []any{true}, "http.get: argument 1: string expected, got boolean"},
		{"http.get", []any{"http://user:secret@a b/"}, `http.get http://xxxxx@a b/: invalid URL: invalid character " " in host name`},
		{"http.get", []any{ts.URL, map[string]any{"timeout": math.NaN()}}, "http.get: argument 2: timeout: seconds expected, got nan"},
		{"http.get", []any{ts.URL, map[string]any{"timeout": -0.5}}, "http.get: argument 2: timeout: must be positive, got -0.5"},
		{"http.get", []any{ts.URL, map[string]any{"headers": map[string]any{"A": []any{"x", map[string]any{}}}}}, "http.get: argument 2: headers.A: string expected, got table at [2]"},
		{"http.get", []any{ts.URL, "fast"}, "http.get: argument 2: table expected, got string"},
		{"http.get", []any{ts.URL, map[string]any{"timeout": "soon"}}, "http.get: argument 2: timeout: seconds expected, got string"},
		{"http.get", []any{ts.URL, map[string]any{"timeout": int64(0)}}, "http.get: argument 2: timeout: must be positive, got 0"},
		{"http.get", []any{ts.URL, map[string]any{"headers": "x"}}, "http.get: argument 2: headers: table expected, got string"},
		{"http.get", []any{ts.URL, map[string]any{"headers": map[string]any{"A": true}}}, "http.get: argument 2: headers.A: string expected, got boolean"},
		{"http.request", []any{"x"}, "http.request: argument 1: table expected, got string"},
		{"http.request", nil, "http.request: argument 1: table expected, got no value"},
		{"http.request", []any{map[string]any{}}, "http.request: argument 1: url: string expected, got nil"},
		{"http.request", []any{map[string]any{"url": ts.URL, "body": true}}, "http.request: argument 1: body: string expected, got boolean"},
		{"http.request", []any{map[string]any{"url": ts.URL, "method": []any{}}}, "http.request: argument 1: method: string expected, got table"},
	} {
		h, _ := call(t, s, tc.cmd, tc.args...)
		_, err := result(h)
		assert.EqualError(t, err, tc.want)
	}
}

// TestHTTPKill: a process killed during a request ends with the kill's
// error at once, and the request is aborted (the server sees its context
// end); no goroutine is left (goleak checks at exit).
func TestHTTPKill(t *testing.T) {
	s := newSched(t)
	ts := newTestServer(t)
	h, err := s.Submit(&caller{cmd: "http.get", args: []any{ts.URL + "/hold"}}, "", nil)
	require.NoError(t, err)
	select {
	case <-ts.held:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never arrived")
	}
	require.NoError(t, s.Kill(h.PID(), errors.New("stop")))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = h.Wait(ctx)
	assert.EqualError(t, err, "stop")
	select {
	case <-ts.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's request was not cancelled")
	}
}

// TestHTTPBodyCap: a body over the cap fails the request, whether its
// Content-Length says so or it is chunked (endless, even); a timeout too
// large for a deadline is none; numbers are accepted as the body.
func TestHTTPBodyCap(t *testing.T) {
	s, io := newSchedIO(t)
	ts := newTestServer(t)
	io.maxData = 1024
	for _, path := range []string{"/big", "/sized", "/endless"} {
		h, took := call(t, s, "http.get", ts.URL+path)
		_, err := result(h)
		assert.EqualError(t, err, "http.get "+ts.URL+path+": body larger than 1 KiB")
		assert.Less(t, took, 3*time.Second)
	}
	io.maxData = 2048
	h, _ := call(t, s, "http.get", ts.URL+"/sized")
	assert.Len(t, response(t, h)["body"], 2048)

	for _, d := range []any{1e10, math.Inf(1), int64(math.MaxInt64)} {
		h, _ := call(t, s, "http.get", ts.URL+"/status/200", map[string]any{"timeout": d})
		assert.Equal(t, int64(200), response(t, h)["status"])
	}
	h, _ = call(t, s, "http.request", map[string]any{"url": ts.URL + "/echo", "method": "POST", "body": int64(42)})
	assert.Equal(t, "POST 42", response(t, h)["body"])
}
