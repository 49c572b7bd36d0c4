package serve

// parseQuery against url.ParseQuery: the same pairs (and first values
// in the table), the same refusals.

import (
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
		got, ok := parseQuery(raw)
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
