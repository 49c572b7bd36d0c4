package tests

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// site serves pages /p/0 ... /p/n-1 as a binary tree of links (page i
// links to 2i+1 and 2i+2), plus, from /p/0, a missing page, fragment
// links, a link off the site and one to /, which redirects to /p/0. It
// counts the fetches of each path.
type site struct {
	n      int
	mu     sync.Mutex
	hits   map[string]int
	server *httptest.Server
}

func newSite(t *testing.T, n int) *site {
	s := &site{n: n, hits: map[string]int{}}
	s.server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.server.Close)
	return s
}

func (s *site) page(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><body><h1>page %d</h1>\n", i)
	for _, j := range []int{2*i + 1, 2*i + 2} {
		if j < s.n {
			fmt.Fprintf(&b, "<a href=\"/p/%d\">page %d</a>\n", j, j)
		}
	}
	if i == 0 {
		b.WriteString(`<a href="/missing">gone</a> <a href="#top">top</a> <a href="http://example.invalid/x">away</a>` +
			`<a href="/p/1#part2">part 2 of page 1</a> <a href="/">home</a>` + "\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	if r.URL.Path == "/" {
		http.Redirect(w, r, "/p/0", http.StatusFound)
		return
	}
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil || i < 0 || i >= s.n {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprint(w, s.page(i))
}

// TestCrawl runs scripts/crawl.lua against a loopback site: every page is
// fetched exactly once, the report lists each with its status and size in
// URL order, and the missing page is a 404 line, not a failure.
func TestCrawl(t *testing.T) {
	const pages = 40
	s := newSite(t, pages)
	r := runLuarun(t, "", "scripts/crawl.lua", s.server.URL, "8", "100") // the bare origin: its page is "/"
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	assert.Empty(t, r.stderr)

	type line struct{ url, text string }
	var want []line
	bytes := 0
	for i := range pages {
		url := fmt.Sprintf("%s/p/%d", s.server.URL, i)
		if i == 0 {
			url = s.server.URL + "/" // fetched as "/", redirected to /p/0
		}
		size := len(s.page(i))
		bytes += size
		want = append(want, line{url, fmt.Sprintf("200 %7d %s", size, url)})
	}
	notFound := "404 page not found\n"
	bytes += len(notFound)
	want = append(want, line{s.server.URL + "/missing", fmt.Sprintf("404 %7d %s/missing", len(notFound), s.server.URL)})
	sort.Slice(want, func(i, j int) bool { return want[i].url < want[j].url })

	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, len(want)+1, r.stdout)
	for i, w := range want {
		assert.Equal(t, w.text, lines[i])
	}
	assert.Regexp(t, fmt.Sprintf(`^crawled %d pages \(%d bytes, 0 failed, 0 links not followed\) with 8 fetchers in [0-9.]+ s$`, pages+1, bytes), lines[len(want)])

	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Len(t, s.hits, pages+2, "every path fetched (and / once, redirected)")
	for path, n := range s.hits {
		assert.Equal(t, 1, n, "fetches of %s", path)
	}
}

// TestCrawlErrorsAndPermissions: an unreachable site is a report line and
// a failed count, not a crash; --sandbox takes http away with docs/lua-api.md's
// message, and --allow http gives it back.
func TestCrawlErrorsAndPermissions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/"
	require.NoError(t, ln.Close())

	r := runLuarun(t, "", "scripts/crawl.lua", dead)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 2, r.stdout)
	assert.Regexp(t, `^error `+dead+`: .*connection refused`, lines[0])
	assert.Regexp(t, `^crawled 1 pages \(0 bytes, 1 failed, 0 links not followed\)`, lines[1])

	s := newSite(t, 3)
	r = runLuarun(t, "", "--sandbox", "scripts/crawl.lua", s.server.URL+"/p/0")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "http is not allowed (run without --sandbox or with --allow http)")
	r = runLuarun(t, "", "--sandbox", "--allow", "http", "scripts/crawl.lua", s.server.URL+"/p/0")
	assert.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	assert.Contains(t, r.stdout, "crawled 5 pages (") // /p/0, /p/1, /p/2, /missing and / (redirected)

	r = runLuarun(t, "", "scripts/crawl.lua")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "usage: luarun scripts/crawl.lua URL")
}
