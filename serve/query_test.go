package serve

// appendQuery against url.ParseQuery: the same pairs (and first values
// in the table), the same refusals.

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseQueryMatchesNetURL(t *testing.T) {
	for _, raw := range []string{
		"", "a=1", "a=1&b=2", "a=1&a=2", "a", "a=", "=x", "&&a=1&", "name=hello%20world",
		"k%3D=v%26", "a=b=c", "a=1;b=2", "a=%zz", "%zz=1", "a=+plus+", "x=1&&y", "é=ü",
	} {
		want, wantErr := url.ParseQuery(raw)
		got, ok := appendQuery(nil, raw)
		if wantErr != nil {
			require.False(t, ok, "%q: ParseQuery refuses it", raw)
			continue
		}
		require.True(t, ok, "%q", raw)
		all := url.Values{}
		for _, f := range got {
			all.Add(f.Name, f.Value)
		}
		require.Equal(t, want, all, "%q", raw)
		first := (&Request{Query: got}).Table()["query"].(map[string]any)
		require.Len(t, first, len(want), "%q", raw)
		for k, vs := range want {
			require.Equal(t, vs[0], first[k], "%q: key %q", raw, k)
		}
	}
}

func TestLowerHeader(t *testing.T) {
	for _, k := range []string{"User-Agent", "X-Custom-Thing", "Accept"} {
		require.Equal(t, map[string]string{"User-Agent": "user-agent", "X-Custom-Thing": "x-custom-thing", "Accept": "accept"}[k], lowerHeader(k))
	}
}

// The query and the headers share the request's field buffer: neither
// overwrites the other, whichever fits in it.
func TestRequestFieldsShareBuffer(t *testing.T) {
	srv := &server{opts: serverOpts{maxBody: DefaultMaxBody}}
	for _, tc := range []struct {
		query   string
		headers int
	}{{"", 0}, {"a=1", 2}, {"a=1&b=2&c=3", 1}, {"a=1&b=2&c=3&d=4&e=5", 3}, {"a=1", 6}} {
		r := httptest.NewRequest("GET", "http://h.example/p?"+tc.query, nil)
		for i := range tc.headers {
			r.Header.Set(fmt.Sprintf("X-H%d", i), fmt.Sprint(i))
		}
		req, status, msg := srv.request(httptest.NewRecorder(), r)
		require.Zero(t, status, msg)
		want, _ := url.ParseQuery(tc.query)
		got := url.Values{}
		for _, f := range req.Query {
			got.Add(f.Name, f.Value)
		}
		require.Equal(t, want, got, "query %q", tc.query)
		headers := map[string]string{}
		for _, f := range req.Headers {
			headers[f.Name] = f.Value
		}
		wantHeaders := map[string]string{"host": "h.example"}
		for i := range tc.headers {
			wantHeaders[fmt.Sprintf("x-h%d", i)] = fmt.Sprint(i)
		}
		require.Equal(t, wantHeaders, headers, "query %q", tc.query)
	}
}
