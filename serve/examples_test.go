package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/luaproc"
)

// runExample starts scripts/<name> on a free port and returns the
// address it prints.
func runExample(t *testing.T, name string) string {
	t.Helper()
	pr, pw := io.Pipe()
	rt, err := luaproc.New(luaproc.Options{Allow: []string{"listen", "net"}, Stdout: pw, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hung)
		defer cancel()
		rt.Shutdown(ctx)
		pw.Close()
	})
	s, err := rt.LoadFile("../scripts/" + name)
	require.NoError(t, err)
	_, err = rt.Start(context.Background(), s, "main", "127.0.0.1:0")
	require.NoError(t, err)
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`listening on (?:http://)?(\S+)`).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	return m[1]
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestExampleKVStore(t *testing.T) {
	base := "http://" + runExample(t, "kvstore.lua")
	status, _ := do(t, "PUT", base+"/kv/greeting", "hello")
	assert.Equal(t, 204, status)
	status, body := do(t, "GET", base+"/kv/greeting", "")
	assert.Equal(t, 200, status)
	assert.Equal(t, "hello", body)
	status, _ = do(t, "DELETE", base+"/kv/greeting", "")
	assert.Equal(t, 204, status)
	status, _ = do(t, "GET", base+"/kv/greeting", "")
	assert.Equal(t, 404, status)
	status, _ = do(t, "PATCH", base+"/kv/x", "")
	assert.Equal(t, 405, status)
	status, body = do(t, "GET", base+"/stats", "")
	assert.Equal(t, 200, status)
	assert.Equal(t, `{"keys":0,"served":5}`, body)
}

func TestExampleChat(t *testing.T) {
	addr := runExample(t, "chat.lua")
	join := func(name string) (io.Writer, *bufio.Reader) {
		c, r := dial(t, addr)
		prompt := make([]byte, len("name? "))
		_, err := io.ReadFull(r, prompt)
		require.NoError(t, err)
		fmt.Fprintf(c, "%s\n", name)
		assert.Equal(t, "* welcome, "+name+" (/who, /quit)", readLine(t, r))
		return c, r
	}
	ann, annR := join("ann")
	bob, bobR := join("bob")
	assert.Equal(t, "* bob joined", readLine(t, annR))
	fmt.Fprint(ann, "hi bob\n")
	assert.Equal(t, "<ann> hi bob", readLine(t, bobR))
	fmt.Fprint(bob, "/who\n")
	assert.Equal(t, "* here: ann, bob", readLine(t, bobR))
	fmt.Fprint(bob, "leaving mid-li")
	bob.(interface{ Close() error }).Close()
	assert.Equal(t, "<bob> leaving mid-li", readLine(t, annR))
	assert.Equal(t, "* bob left", readLine(t, annR))
}
