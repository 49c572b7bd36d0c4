package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// installVersion is the version the module is published under in the
// test's own proxy: a pre-release that is never tagged, so it can only
// come from the zip this test made.
const (
	modulePath     = "github.com/luarun/luarun"
	installVersion = "v1.0.0-installtest"
)

// installRan: go test -cpu 1,2,4,8 runs each test once per value in one
// process; building luarun from a zip twice over is worth doing once.
var installRan atomic.Bool

// TestInstallFromModuleProxy publishes this repository the way a module
// proxy serves it — a zip made by golang.org/x/mod/zip, with its .info,
// .mod and list, in a file:// GOPROXY — and checks what a user does with
// it: (a) go install github.com/luarun/luarun@VERSION gives a luarun that
// runs a script; (b) a new module that requires github.com/luarun/luarun,
// with no replace directive, builds and runs testdata/embedder (every main
// call of the embedding API, through luaproc alone) and a program using
// luarun's lua package directly. Dependencies come from the machine's module
// cache (its download directory is the second proxy of the list), then
// from the real GOPROXY; the module cache the go commands write is a
// temporary one, so nothing of this version outlives the test.
func TestInstallFromModuleProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds luarun twice from a module zip (a minute or two): not under -short")
	}
	if len(raceFlags) > 0 {
		t.Skip("runs in the plain pass: it only drives go commands, the race detector adds nothing")
	}
	if !installRan.CompareAndSwap(false, true) {
		t.Skip("ran once in this test binary already (go test -cpu runs each test once per value)")
	}

	goenv := goEnv(t, "GOPROXY", "GOMODCACHE", "GOFLAGS", "GONOSUMDB")
	root, err := filepath.Abs("..")
	require.NoError(t, err)

	// the proxy: <dir>/github.com/luarun/luarun/@v/{list,VERSION.info,.mod,.zip}
	proxy := t.TempDir()
	vdir := filepath.Join(proxy, filepath.FromSlash(modulePath), "@v")
	require.NoError(t, os.MkdirAll(vdir, 0o755))
	// CreateFromDir packs the working tree as it is (leaving out .git and
	// nested modules, as the go command does), so a local run also tests
	// uncommitted changes; in CI's clean clone it is what a tag serves
	var zipped bytes.Buffer
	require.NoError(t, modzip.CreateFromDir(&zipped, module.Version{Path: modulePath, Version: installVersion}, root),
		"packing the repository as a module zip")
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	mf, err := modfile.Parse("go.mod", gomod, nil)
	require.NoError(t, err)
	require.Empty(t, mf.Replace, "go.mod: go install refuses a module with a replace directive")
	info, err := json.Marshal(map[string]string{"Version": installVersion, "Time": time.Now().UTC().Format(time.RFC3339)})
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"list":                   []byte(installVersion + "\n"),
		installVersion + ".info": info,
		installVersion + ".mod":  gomod,
		installVersion + ".zip":  zipped.Bytes(),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(vdir, name), data, 0o644))
	}
	t.Logf("module zip: %d KB", zipped.Len()/1024)

	modcache := t.TempDir() // -modcacherw below, so that it can be removed
	gobin := t.TempDir()
	nosumdb := modulePath // no checksum database knows this version
	if goenv["GONOSUMDB"] != "" {
		nosumdb = goenv["GONOSUMDB"] + "," + nosumdb
	}
	env := append(os.Environ(),
		"GOPROXY="+fileURL(proxy)+","+fileURL(filepath.Join(goenv["GOMODCACHE"], "cache", "download"))+","+goenv["GOPROXY"],
		"GOMODCACHE="+modcache,
		"GONOSUMDB="+nosumdb,
		// -trimpath: the packages' paths in the temporary module cache
		// change every run; without them in the build's cache keys,
		// runs after the first find the dependencies compiled
		"GOFLAGS="+strings.TrimSpace(goenv["GOFLAGS"]+" -modcacherw -trimpath"),
		"GOBIN="+gobin,
		"GOWORK=off",
	)
	if goenv["GOPROXY"] == "off" {
		// offline by choice: the dependencies come from this machine's
		// cache, and the checksum database (reached through the proxy)
		// cannot be asked about them
		t.Log("GOPROXY=off: dependencies are not checked against the checksum database")
		env = append(env, "GOSUMDB=off")
	}
	gocmd := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.Command("go", args...)
		var stdout, stderr bytes.Buffer
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
		require.NoError(t, cmd.Run(), "go %s:\n%s%s", strings.Join(args, " "), &stdout, &stderr)
		t.Logf("go %s: %.1f s", strings.Join(args, " "), time.Since(start).Seconds())
		return stdout.String()
	}

	// (a) go install, from outside any module, as the README says
	t.Run("install", func(t *testing.T) {
		gocmd(t, t.TempDir(), "install", modulePath+"@"+installVersion)
		bin := filepath.Join(gobin, "luarun")
		// the binary says where it came from: our version, not replaced
		buildinfo := gocmd(t, t.TempDir(), "version", "-m", bin)
		assert.Contains(t, buildinfo, "\tmod\t"+modulePath+"\t"+installVersion+"\t", buildinfo)
		assert.NotContains(t, buildinfo, "=>", "a replaced module in the build info")
		assert.NotContains(t, buildinfo, "yuin/gopher-lua", "upstream gopher-lua in the build info")

		script := filepath.Join(t.TempDir(), "hello.lua")
		require.NoError(t, os.WriteFile(script, []byte(`
function worker(boss, n)
  process.send(boss, n * n)
end

function main(who)
  process.spawn("worker", process.self(), 7)
  local square = process.receive()
  print("hello from " .. who .. ": " .. square)
end
`), 0o644))
		cmd := exec.Command(bin, "--timeout", "60s", script, "go install")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
		assert.Equal(t, "hello from go install: 49\n", stdout.String(), "stderr:\n%s", stderr.String())
	})

	// (b) a Go module of its own that embeds luarun through go get
	t.Run("embed", func(t *testing.T) {
		dir := t.TempDir()
		gocmd(t, dir, "mod", "init", "example.com/embedder")
		embedder, err := os.ReadFile(filepath.Join("testdata", "embedder", "main.go"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), embedder, 0o644))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "luadirect"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "luadirect", "main.go"), []byte(embedderLua), 0o644))
		gocmd(t, dir, "get", modulePath+"@"+installVersion)
		gocmd(t, dir, "mod", "tidy")

		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		require.NoError(t, err)
		mf, err := modfile.Parse("go.mod", mod, nil)
		require.NoError(t, err)
		assert.Contains(t, string(mod), modulePath+" "+installVersion, "go.mod:\n%s", mod)
		assert.Empty(t, mf.Replace, "go.mod:\n%s", mod)
		var m struct {
			Version, Dir string
			Replace      any
		}
		require.NoError(t, json.Unmarshal([]byte(gocmd(t, dir, "list", "-m", "-json", modulePath)), &m))
		assert.Equal(t, installVersion, m.Version)
		assert.Nil(t, m.Replace)
		assert.True(t, strings.HasPrefix(m.Dir, modcache+string(filepath.Separator)), "luarun's source is %s, not in the module cache %s", m.Dir, modcache)
		assert.NotContains(t, gocmd(t, dir, "list", "-deps", "./..."), "yuin/gopher-lua", "the embedder builds against upstream gopher-lua")

		// the embedding program needs luaproc alone of luarun's packages
		for _, imp := range strings.Fields(gocmd(t, dir, "list", "-f", `{{join .Imports " "}}`, ".")) {
			if strings.HasPrefix(imp, modulePath) {
				assert.Equal(t, modulePath+"/luaproc", imp, "the embedding program imports %s", imp)
			}
		}
		assert.Equal(t, embedderWant, runBuilt(t, gocmd, dir, "."))
		assert.Equal(t, "lua: 42\n", runBuilt(t, gocmd, dir, "./luadirect"))
	})
}

// runBuilt builds package pkg of the module in dir and runs it, and
// returns what it printed (failing t if it fails).
func runBuilt(t *testing.T, gocmd func(*testing.T, string, ...string) string, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "prog")
	gocmd(t, dir, "build", "-o", bin, pkg)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s: stderr:\n%s", pkg, stderr.String())
	return stdout.String()
}

// embedderLua is the second program of (b): luarun's lua package (its
// gopher-lua) used directly.
const embedderLua = `package main

import (
	"fmt"
	"os"

	"github.com/luarun/luarun/lua"
)

func main() {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString("answer = 6 * 7"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("lua:", L.GetGlobal("answer"))
}
`

// embedderWant is what testdata/embedder/main.go prints.
const embedderWant = `message: HELLO EMBEDDER! req-7 / no row missing true
call: half of 42?
answer: pong ping
results: [thanks 42] <nil>
cancelled: killed: the client went away true
stats: started 3, returned 1, killed 1, failed 0, live 1
after shutdown: true
`

// goEnv is go env's value of each key.
func goEnv(t *testing.T, keys ...string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"env", "-json"}, keys...)...).Output()
	require.NoError(t, err, "go env")
	env := map[string]string{}
	require.NoError(t, json.Unmarshal(out, &env))
	return env
}

// fileURL is a GOPROXY entry for a directory.
func fileURL(dir string) string {
	return fmt.Sprintf("file://%s", filepath.ToSlash(dir))
}
