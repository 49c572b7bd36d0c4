package commands

// http.get and http.request: one goroutine per request, using the IO's
// shared client (idle connections are kept per host, so many processes
// calling one service reuse them). The request's context is the calling
// process's, with the request's timeout (opts.timeout, else
// DefaultHTTPTimeout) covering connect, headers and the whole body: a kill
// or a timeout aborts the request wherever it is. Any status is a
// response, not an error; errors are failures to get one.
//
// A body larger than the IO's cap (256 MiB) fails the request: at most
// one byte past the cap is read, so an endless body stops there.
// A URL with a password is written redacted ("user:xxxxx@") in errors.
//
// Redirects are followed, up to 10 (Go's client's default), unless
// follow_redirects says otherwise: false (or 0) returns a 3xx as the
// response, a number n follows at most n and fails past them ("stopped
// after n redirects"). The response's url is the URL it came from, after
// the redirects followed.
//
// Response headers are keyed by their lowercased names ("content-type"),
// so a script need not guess Go's or the server's casing; repeated headers
// are joined with ", ". Request header names are sent as given (Go
// canonicalizes them on HTTP/1.1; "Host" sets the request's host).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/luarun/luarun/scheduler"
)

// httpGet: http.get(url [, opts]), opts = {headers=, timeout=,
// follow_redirects=}.
func (o *IO) httpGet(c scheduler.Call) error {
	r, err := getArgs(c.Args)
	if err != nil {
		return err
	}
	o.do(c, r)
	return nil
}

// httpRequest: http.request{method=, url=, headers=, body=, timeout=,
// follow_redirects=}.
func (o *IO) httpRequest(c scheduler.Call) error {
	r, err := requestArgs(c.Args)
	if err != nil {
		return err
	}
	o.do(c, r)
	return nil
}

// getArgs reads http.get's arguments.
func getArgs(args []any) (request, error) {
	u, err := argString(args, 0)
	if err != nil {
		return request{}, err
	}
	opts, err := argOptions(args, 1, httpGetOptions...)
	if err != nil {
		return request{}, err
	}
	r, err := parseRequest(http.MethodGet, u, opts, false)
	if err != nil {
		return request{}, fmt.Errorf("argument 2: %w", err)
	}
	r.command = "http.get"
	return r, nil
}

// requestArgs reads http.request's table.
func requestArgs(args []any) (request, error) {
	req, err := argOptions(args, 0, httpRequestOptions...)
	if err == nil && req == nil {
		err = fmt.Errorf("argument 1: table expected, got %s", typeName(args, 0))
	}
	if err != nil {
		return request{}, err
	}
	method, err := optString(req, "method")
	if err != nil {
		return request{}, fmt.Errorf("argument 1: %w", err)
	}
	if method == "" {
		method = http.MethodGet
	}
	method = strings.ToUpper(method)
	u, err := optString(req, "url")
	if err == nil && u == "" {
		err = errors.New("url: string expected, got nil")
	}
	if err != nil {
		return request{}, fmt.Errorf("argument 1: %w", err)
	}
	r, err := parseRequest(method, u, req, true)
	if err != nil {
		return request{}, fmt.Errorf("argument 1: %w", err)
	}
	r.command = "http.request"
	return r, nil
}

// request is an HTTP request read from a script's table.
type request struct {
	command     string // "http.get" or "http.request"
	method, url string
	header      http.Header // nil if no headers are given
	host        string
	body        *string
	timeout     time.Duration
	redirects   int // how many redirects to follow (follow_redirects)
}

// The keys of http.get's options and of http.request's table.
var (
	httpGetOptions     = []string{"headers", "timeout", "follow_redirects"}
	httpRequestOptions = []string{"method", "url", "headers", "body", "timeout", "follow_redirects"}
)

// defaultRedirects is how many redirects a request follows unless
// follow_redirects says otherwise (Go's client's own default).
const defaultRedirects = 10

// redirectsKey holds a request's redirect limit in its context, for the
// shared client's CheckRedirect (followRedirects).
type redirectsKey struct{}

// followRedirects is the IO client's CheckRedirect: it follows as many
// redirects as the request's follow_redirects allows; with none allowed
// the redirect itself is the response.
func followRedirects(req *http.Request, via []*http.Request) error {
	limit, ok := req.Context().Value(redirectsKey{}).(int)
	if !ok {
		limit = defaultRedirects
	}
	switch {
	case limit == 0:
		return http.ErrUseLastResponse
	case len(via) > limit:
		return fmt.Errorf("stopped after %d redirects", limit)
	}
	return nil
}

// optRedirects reads follow_redirects: true (the default: up to
// defaultRedirects), false (none: a 3xx is the response), or how many.
func optRedirects(t map[string]any) (int, error) {
	switch v := t["follow_redirects"].(type) {
	case nil:
		return defaultRedirects, nil
	case bool:
		if v {
			return defaultRedirects, nil
		}
		return 0, nil
	case int64:
		if v >= 0 && v <= math.MaxInt32 {
			return int(v), nil
		}
	case float64:
		if v >= 0 && v <= math.MaxInt32 && v == math.Trunc(v) {
			return int(v), nil
		}
	default:
		return 0, fmt.Errorf("follow_redirects: boolean or number expected, got %s", luaType(v))
	}
	s, _ := scalarString(t["follow_redirects"])
	return 0, fmt.Errorf("follow_redirects: a count of redirects (0 or more) expected, got %s", s)
}

// parseRequest reads headers=, timeout= and (if withBody) body= from t.
// It allocates only for a body and headers: CheckArgs runs it too.
func parseRequest(method, u string, t map[string]any, withBody bool) (request, error) {
	r := request{method: method, url: u}
	var err error
	if r.timeout, err = optTimeout(t, DefaultHTTPTimeout); err != nil {
		return request{}, err
	}
	if r.redirects, err = optRedirects(t); err != nil {
		return request{}, err
	}
	if withBody && t["body"] != nil {
		b, err := optString(t, "body")
		if err != nil {
			return request{}, err
		}
		r.body = &b
	}
	if t["headers"] == nil {
		return r, nil
	}
	hs, err := asTable(t["headers"])
	if err != nil {
		return request{}, fmt.Errorf("headers: %w", err)
	}
	r.header = make(http.Header, len(hs))
	for name, v := range hs {
		vals, err := headerValues(v)
		if err != nil {
			return request{}, fmt.Errorf("headers.%s: %w", name, err)
		}
		if strings.EqualFold(name, "host") {
			if len(vals) > 0 {
				r.host = vals[0]
			}
			continue
		}
		for _, s := range vals {
			r.header.Add(name, s)
		}
	}
	return r, nil
}

// headerValues reads a header value: a string, a number, or a list of them
// (the header repeated).
func headerValues(v any) ([]string, error) {
	if s, ok := scalarString(v); ok {
		return []string{s}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("string expected, got %s", luaType(v))
	}
	out := make([]string, len(list))
	for i, e := range list {
		if out[i], ok = scalarString(e); !ok {
			return nil, fmt.Errorf("string expected, got %s at [%d]", luaType(e), i+1)
		}
	}
	return out, nil
}

// label starts r's error messages: "http.get URL" or "http.request
// METHOD URL", with any password in the URL masked. Made only on failure.
func (r *request) label() string {
	if r.command == "http.get" {
		return r.command + " " + redactURL(r.url)
	}
	return r.command + " " + r.method + " " + redactURL(r.url)
}

// do checks r's URL, then sends r on a goroutine and completes c with the
// response table, or fails it with an error that starts with r.label().
func (o *IO) do(c scheduler.Call, r request) {
	ctx, cancel := withTimeout(c.Ctx, r.timeout)
	ctx = context.WithValue(ctx, redirectsKey{}, r.redirects)
	var body io.Reader
	if r.body != nil {
		body = strings.NewReader(*r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err == nil {
		err = checkURL(req.URL)
	} else if _, bad := err.(*url.Error); bad {
		err = fmt.Errorf("invalid URL: %w", unwrapURLError(err))
	} else {
		err = unwrapURLError(err)
	}
	if err != nil {
		cancel()
		c.Fail(fmt.Errorf("%s: %w", r.label(), err))
		return
	}
	if r.header != nil {
		req.Header = r.header
	}
	if r.host != "" {
		req.Host = r.host
	}
	o.startCall(c, func() {
		defer cancel()
		res, err := o.roundTrip(ctx, req)
		if err != nil {
			c.Fail(httpError(ctx, r.label(), err))
			return
		}
		c.Complete(res)
	})
}

// roundTrip sends req and reads the whole response, at most o.maxData
// bytes of body.
func (o *IO) roundTrip(ctx context.Context, req *http.Request) (map[string]any, error) {
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := readBody(ctx, resp, o.maxData)
	if err != nil {
		return nil, err
	}
	headers := make(map[string]any, len(resp.Header))
	for k, vs := range resp.Header {
		headers[lowerHeader(k)] = strings.Join(vs, ", ")
	}
	return map[string]any{
		"status":  int64(resp.StatusCode),
		"body":    ownedString(b),
		"headers": headers,
		"url":     resp.Request.URL.String(), // after the redirects followed
	}, nil
}

// readBody reads resp's body, failing if it has more than limit bytes.
func readBody(ctx context.Context, resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		return nil, tooLargeError{"body", limit}
	}
	b, err := readCapped(ctx, resp.Body, max(resp.ContentLength, 0), limit, "body")
	if _, tooLarge := err.(tooLargeError); err != nil && !tooLarge {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	return b, err
}

// checkURL accepts absolute http and https URLs (parsed once, by
// http.NewRequestWithContext).
func checkURL(u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	case "":
		return errors.New("invalid URL: http:// or https:// expected")
	default:
		return fmt.Errorf("invalid URL: scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("invalid URL: no host")
	}
	return nil
}

// httpError words a failed request: a timeout or a kill says so; Go's
// `Get "url":` prefix and the dial details are dropped.
func httpError(ctx context.Context, label string, err error) error {
	if ctx.Err() != nil {
		cause := context.Cause(ctx)
		var te timeoutError
		if errors.As(cause, &te) {
			return fmt.Errorf("%s: %w", label, te)
		}
		return cause // the process was killed: nobody reads this
	}
	err = unwrapURLError(err)
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		reason := dns.Err
		if dns.IsNotFound {
			reason = "no such host"
		}
		return fmt.Errorf("%s: lookup %s: %s", label, dns.Name, reason)
	case errors.As(err, &op):
		return fmt.Errorf("%s: %w", label, sysError(op.Err))
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: the server closed the connection without a response", label)
	}
	return fmt.Errorf("%s: %w", label, err)
}

// redactURL writes raw with its password, if any, as "xxxxx" (url.URL's
// Redacted); a URL that does not parse has its whole user information so
// written, if it seems to have one.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err == nil {
		if _, ok := u.User.Password(); ok {
			return u.Redacted()
		}
		return raw
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	i := strings.LastIndexByte(authority, '@')
	if !ok || i < 0 {
		return raw
	}
	return scheme + "://xxxxx" + rest[i:]
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// lowerHeader is strings.ToLower for a canonical header name, without
// allocating for the common ones (a response has a few of them, and
// lowering each allocated).
func lowerHeader(k string) string {
	if l, ok := commonHeaders[k]; ok {
		return l
	}
	return strings.ToLower(k)
}

var commonHeaders = func() map[string]string {
	m := map[string]string{}
	for _, k := range commonHeaderNames {
		m[k] = strings.ToLower(k)
	}
	return m
}()

// commonHeaderNames are the response headers lowerHeader knows, canonical.
var commonHeaderNames = []string{
	"Accept-Ranges", "Age", "Cache-Control", "Connection", "Content-Disposition",
	"Content-Encoding", "Content-Language", "Content-Length", "Content-Type", "Date",
	"Etag", "Expires", "Keep-Alive", "Last-Modified", "Link", "Location", "Server",
	"Set-Cookie", "Strict-Transport-Security", "Transfer-Encoding", "Vary", "Via",
	"Www-Authenticate", "X-Content-Type-Options", "X-Frame-Options", "X-Request-Id",
}
