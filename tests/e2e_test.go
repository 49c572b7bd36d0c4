// Package tests drives the real luarun binary the way a person would: it
// is built once per test run, then every example script and every exit
// status is produced by a real case.
package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var luarun string // the binary under test

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "luarun-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	consultSources()
	luarun = filepath.Join(dir, "luarun")
	build := exec.Command("go", append(append([]string{"build"}, raceFlags...), "-o", luarun, "..")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build luarun:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// consultSources reads every Go and Lua file of the module. go test
// caches a test's result by the files the test itself opened; the binary
// is built by a subprocess, so without this a change to the code under
// test would not invalidate a cached pass.
func consultSources() {
	filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" && path != "../luaproc/testdata") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); ext == ".go" || ext == ".lua" || d.Name() == "go.mod" || d.Name() == "go.sum" {
			os.ReadFile(path)
		}
		return nil
	})
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runLuarun runs the binary from the repository root with args. The
// binary gets as many workers as the test has Ps, so each -cpu setting
// runs the scripts on a different number of workers.
func runLuarun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runLuarunIn(t, "..", nil, stdin, args...)
}

// runLuarunIn is runLuarun from directory dir, with env added to the
// environment.
func runLuarunIn(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"-w", strconv.Itoa(runtime.GOMAXPROCS(0))}, args...)
	cmd := exec.CommandContext(ctx, luarun, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(t0)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else {
		require.NoError(t, err, "run luarun %v", args)
	}
	return r
}

// writeScript writes a script into a temporary directory and returns its path.
func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o755))
	return path
}

func TestExampleScripts(t *testing.T) {
	cases := []struct {
		args []string
		want []string // regexps, each matching a line of stdout, in order
	}{
		{[]string{"scripts/hello.lua"}, []string{`^hello, world \(from process 2\)$`}},
		{[]string{"scripts/hello.lua", "Ada"}, []string{`^hello, Ada \(from process 2\)$`}},
		{[]string{"scripts/pingpong.lua", "2000"}, []string{`^2000 round trips in [0-9.]+ s: \d+ ns per round trip$`}},
		{[]string{"scripts/ring.lua", "100", "10000"}, []string{`^ring of 100 processes: 10000 hops in [0-9.]+ s, \d+ ns per hop \(spawn [0-9.]+ us each\)$`}},
		{[]string{"scripts/workers.lua", "6", "3"}, []string{
			`^job  1:    168 primes below 1000$`, `^job  2:    303 primes below 2000$`, `^job  3:    430 primes below 3000$`,
			`^job  4:    550 primes below 4000$`, `^job  5:    669 primes below 5000$`, `^job  6:    783 primes below 6000$`}},
		{[]string{"scripts/pipeline.lua", "100"}, []string{`^sum of the 50 even squares of 1\.\.100: 171700$`}},
		{[]string{"scripts/timeouts.lua"}, []string{
			`^receive:\tnil\ttimeout$`, `^wait 0\.05 s:\tnil\ttimeout$`, `^wait again: \ttrue\tfinished after 0\.2 s$`,
			`^killed:     \tfalse\tkilled: it had to go$`, `^all:         finished after 0\.1 s / nil, in 0\.1 s$`}},
		{[]string{"scripts/report.lua", "3", "1000"}, []string{`^3 workers: 1000 numbers, min 0, max 999, mean 499\.50$`}},
		{[]string{"scripts/errors.lua"}, []string{
			`-> true, 8080$`, `-> false, scripts/errors\.lua:11: config has no port$`,
			`-> false, scripts/errors\.lua:10: config is not JSON$`,
			`^child 1: ok=true result=10$`, `^child 2: ok=true result=20$`,
			`^child 3: ok=false result=scripts/errors\.lua:16: child 3 refuses$`,
			`^xpcall:\tfalse\thandled: scripts/errors\.lua:31: `,
			`^send to a missing process:\tnil\tno process 999999 `}},
		{[]string{"scripts/supervisor.lua", "100", "4"}, []string{
			`^100 jobs done by 4 workers; 14 crashes, 14 restarts; sum of squares 338350$`}},
		{[]string{"scripts/supervisor.lua", "300", "1"}, []string{
			`^300 jobs done by 1 workers; 42 crashes, 42 restarts; sum of squares 9045050$`}},
		{[]string{"scripts/kvserver.lua", "8", "1000"}, []string{
			`^8 clients made 8008 calls in [0-9.]+ s, [0-9.]+ us per call$`,
			`^hits 2000, clients done 8, keys left 2$`,
			`^unknown request:\tunknown request: frobnicate$`,
			`^server served\t8011$`,
			`^after it stopped:\tfalse\tkv.get: no process registered as "kv"$`}},
		// alone, the one node "local" (three nodes: cluster/e2e_test.go)
		{[]string{"scripts/cluster.lua", "1", "100000", "2", "10000"}, []string{
			`^job 1/10 on local$`, `^job 2/10 on local$`, `^job 3/10 on local$`, `^job 4/10 on local$`, `^job 5/10 on local$`, `^job 6/10 on local$`, `^job 7/10 on local$`, `^job 8/10 on local$`, `^job 9/10 on local$`, `^job 10/10 on local$`,
			`^  local counted 10 ranges$`, `^primes below 100000: 9592 \(1 nodes, [0-9.]+ s\)$`}},
	}
	scripts, err := filepath.Glob("../scripts/*.lua")
	require.NoError(t, err)
	covered := map[string]bool{
		"crawl.lua":   true, // needs a server: crawl_test.go
		"jobs.lua":    true, // interrupted: TestJobsScript
		"logagg.lua":  true, // writes files: TestLogaggScript
		"kvstore.lua": true, // a server, tried with a client: serve/examples_test.go
		"chat.lua":    true, // a TCP server, tried with clients: serve/examples_test.go
	}
	for _, c := range cases {
		covered[filepath.Base(c.args[0])] = true
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runLuarun(t, "", c.args...)
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			require.Len(t, lines, len(c.want), r.stdout)
			for i, w := range c.want {
				assert.Regexp(t, w, lines[i])
			}
			assert.Empty(t, r.stderr)
		})
	}
	for _, s := range scripts {
		assert.True(t, covered[filepath.Base(s)], "scripts/%s has no end-to-end case", filepath.Base(s))
	}
}

func TestExitStatuses(t *testing.T) {
	t.Run("missing file: 2", func(t *testing.T) {
		r := runLuarun(t, "", "no/such/script.lua")
		assert.Equal(t, 2, r.code)
		assert.Equal(t, "luarun: cannot read script: open no/such/script.lua: no such file or directory\n", r.stderr)
	})
	t.Run("syntax error: 2 with file:line", func(t *testing.T) {
		path := writeScript(t, "bad.lua", "local x = 1\nif x then\n  print(x))\nend\n")
		r := runLuarun(t, "", path)
		assert.Equal(t, 2, r.code)
		assert.Regexp(t, `^luarun: `+regexp.QuoteMeta(path)+`:3: unexpected symbol near '\)'\n$`, r.stderr)
	})
	t.Run("runtime error: 1 with message and traceback", func(t *testing.T) {
		path := writeScript(t, "crash.lua", "local function load(cfg)\n  return cfg.name\nend\nfunction main()\n  time.sleep(0)\n  local n = load(nil)\n  return n\nend\n")
		r := runLuarun(t, "", path)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, "luarun: "+path+":2: attempt to index local 'cfg' (a nil value)\n"+
			"stack traceback:\n\t"+path+":2: in function 'load'\n\t"+path+":6: in function 'main'\n", r.stderr)
		assert.NotContains(t, r.stderr, "goroutine", "no Go stack trace")
	})
	t.Run("unknown entry: 2 listing the real ones", func(t *testing.T) {
		path := writeScript(t, "e.lua", "function main() end\nfunction worker() end\n")
		r := runLuarun(t, "", "--entry", "wroker", path)
		assert.Equal(t, 2, r.code)
		assert.Equal(t, "luarun: "+path+`: unknown entry "wroker" (did you mean 'worker'? entries: main, worker)`+"\n", r.stderr)
	})
	t.Run("usage error: 2", func(t *testing.T) {
		r := runLuarun(t, "", "--no-such-flag", "x.lua")
		assert.Equal(t, 2, r.code)
		assert.Contains(t, r.stderr, "flag provided but not defined")
		r = runLuarun(t, "")
		assert.Equal(t, 2, r.code)
		assert.Contains(t, r.stderr, "no script given")
		r = runLuarun(t, "", "--sandbox", "--allow", "sockets", "scripts/hello.lua")
		assert.Equal(t, 2, r.code)
		assert.Contains(t, r.stderr, "--allow sockets: unknown module")
	})
	t.Run("timeout on a busy loop: 124", func(t *testing.T) {
		r := runLuarun(t, "local n = 0\nwhile true do n = n + 1 end\n", "--timeout", "300ms", "-")
		assert.Equal(t, 124, r.code)
		assert.Equal(t, "luarun: timeout: the main process ran longer than 300ms\n", r.stderr)
		assert.Less(t, r.took, 10*time.Second)
	})
	t.Run("sandbox violation: 1", func(t *testing.T) {
		r := runLuarun(t, "print(os.getenv(\"HOME\"))", "--sandbox", "-")
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "luarun: stdin:1: os is not allowed (run without --sandbox or with --allow os)")
		r = runLuarun(t, "print(type(os.time()))", "--sandbox", "--allow", "os,io", "-")
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "number\n", r.stdout)
	})
	t.Run("sandbox: spawn_file reads no file outside the program", func(t *testing.T) {
		secret := writeScript(t, "secret.txt", "the secret line\n")
		main := writeScript(t, "main.lua", `process.wait(process.spawn_file(...))`)
		r := runLuarun(t, "", "--sandbox", main, secret)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, secret+": it is outside the program's directory")
		assert.NotContains(t, r.stderr, "secret line")
		r = runLuarun(t, "", "--sandbox", "--allow", "fs", main, secret)
		assert.Equal(t, 1, r.code, "a syntax error in the file")
		assert.Contains(t, r.stderr, "secret.txt:1:")
	})
}

// TestInterruptDuringSleep: SIGINT cancels every process; a sleeping one
// ends at once, well within the grace period, and luarun exits 130.
func TestInterruptDuringSleep(t *testing.T) {
	path := writeScript(t, "sleepy.lua", `
function sleeper() time.sleep(60) end
function main()
  for i = 1, 100 do process.spawn("sleeper") end
  print("ready")
  time.sleep(60)
end`)
	cmd := exec.Command(luarun, "--shutdown-timeout", "5s", path)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 6)
	_, err = stdout.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(buf))
	t0 := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.ExitCode())
	assert.Less(t, time.Since(t0), 3*time.Second, "ended within the grace period")
	assert.Contains(t, errb.String(), "luarun: interrupt: stopping every process")
	assert.NotContains(t, errb.String(), "abandoned")
}

// TestNoInterleavedOutput: 100 processes printing long lines at once;
// every line arrives whole.
func TestNoInterleavedOutput(t *testing.T) {
	path := writeScript(t, "chatty.lua", `
function talker(id)
  local line = string.rep(string.char(65 + id % 26), 2000)
  for i = 1, 25 do
    print(id, line)
    if i % 5 == 0 then time.sleep(0) end
  end
end
function main()
  local pids = {}
  for id = 1, 100 do pids[id] = process.spawn("talker", id) end
  for _, pid in ipairs(pids) do process.wait(pid) end
end`)
	r := runLuarun(t, "", path)
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 100*25)
	counts := map[int]int{}
	for _, l := range lines {
		var id int
		var body string
		_, err := fmt.Sscanf(l, "%d\t%s", &id, &body)
		require.NoError(t, err, "line %.60q", l)
		require.Equal(t, strings.Repeat(string(rune(65+id%26)), 2000), body, "line of %d is mixed", id)
		counts[id]++
	}
	for id := 1; id <= 100; id++ {
		require.Equal(t, 25, counts[id], "lines of process %d", id)
	}
}

func TestCheck(t *testing.T) {
	good := writeScript(t, "good.lua", "print(1)")
	bad1 := writeScript(t, "bad1.lua", "x = = 1")
	bad2 := writeScript(t, "bad2.lua", "function f()\n")
	r := runLuarun(t, "", "check", good, bad1, bad2)
	assert.Equal(t, 2, r.code)
	assert.Equal(t, bad1+":1: unexpected symbol near '='\n"+bad2+":2: 'end' expected (to close 'function' at line 1) near '<eof>'\n", r.stderr)
	r = runLuarun(t, "", "check", good, "scripts/ring.lua")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "2 files ok\n", r.stdout)
}

func TestStdinShebangArgsAndStats(t *testing.T) {
	r := runLuarun(t, "#!/usr/bin/env luarun\nlocal a, b = ...\nprint(a, b, arg[0], #arg)\n", "-", "a", "b")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "a\tb\t-\t2\n", r.stdout) // arg[0] is "-", as in lua

	r = runLuarun(t, "", "--stats", "scripts/hello.lua")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `luarun: processes: 2 started: 2 returned, 0 failed, 0 killed, 0 cancelled at exit, 0 abandoned, 0 still live; 0 refused`, r.stderr)
	assert.Regexp(t, `luarun: scheduler: \d+ steps`, r.stderr)

	r = runLuarun(t, "", "--version")
	assert.Equal(t, 0, r.code)
	assert.Regexp(t, `^luarun version `, r.stdout)

	r = runLuarun(t, "", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "luarun scripts/ring.lua 1000 100000")
}

func TestLogFormats(t *testing.T) {
	src := `log.info("started", "items", 3)`
	r := runLuarun(t, src, "--log-format", "json", "-")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `"msg":"started".*"pid":1`, r.stderr)
	rfc3339 := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)` // milliseconds and zone
	assert.Regexp(t, `^\{"time":"`+rfc3339+`"`, r.stderr)
	r = runLuarun(t, src, "--log-format", "logfmt", "-")
	assert.Regexp(t, `msg=started pid=1 items=3`, r.stderr)
	assert.Regexp(t, `^time=`+rfc3339+` `, r.stderr)
	r = runLuarun(t, src, "--log-level", "error", "-")
	assert.Empty(t, r.stderr)
	r = runLuarun(t, src, "--log-format", "xml", "-")
	assert.Equal(t, 2, r.code)
}
