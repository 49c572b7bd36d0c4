package luaproc

// The documentation a clone carries is kept true here: docs/lua-api.md
// names every function the runtime registers and its examples run and
// print what they say; docs/luals/luarun.lua (the editor definitions)
// declares every function of luarun's own modules.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	lua "github.com/luarun/luarun/lua"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	referencePath = "../docs/lua-api.md"
	lualsPath     = "../docs/luals/luarun.lua"
)

// luarunModules are the modules luarun itself defines (the rest of the
// template's are Lua's standard libraries).
var luarunModules = []string{"process", "time", "log", "json", "fs", "http", "exec", "supervisor", "pool"}

// registered lists what a runtime with every permission gives a script:
// module → names (module "" for the base functions).
func registered(t *testing.T) map[string][]string {
	t.Helper()
	rt, _, _ := newTestRuntime(t, Options{Allow: Permissions()})
	tpl := rt.template()
	out := map[string][]string{}
	tpl.globals.ForEach(func(k, v lua.LValue) {
		name := k.String()
		if _, isTable := v.(*lua.LTable); !isTable {
			out[""] = append(out[""], name)
		} else if tpl.isBuiltinModule(name) && name != "package" && name != lua.IoLibName {
			v.(*lua.LTable).ForEach(func(k, _ lua.LValue) {
				out[name] = append(out[name], k.String())
			})
		}
	})
	// io is opened in each state on first use: list a fresh one's
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	open(L, lua.IoLibName, lua.OpenIo)
	L.GetGlobal(lua.IoLibName).(*lua.LTable).ForEach(func(k, _ lua.LValue) {
		out["io"] = append(out["io"], k.String())
	})
	out["package"] = []string{"path", "cpath", "config", "loaded", "preload", "loaders"}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// TestReferenceNamesEverything: every function and field a script can
// reach is named in the reference, as `module.name` (or `name` for a base
// function), and every luarun module has a section.
func TestReferenceNamesEverything(t *testing.T) {
	doc, err := os.ReadFile(referencePath)
	require.NoError(t, err)
	text := string(doc)
	for module, names := range registered(t) {
		for _, name := range names {
			full := name
			if module != "" {
				full = module + "." + name
			}
			if module == "" && (name == "_G" || strings.HasPrefix(name, "_") && name != "_VERSION") {
				continue
			}
			named := regexp.MustCompile("`" + regexp.QuoteMeta(full) + "[`({]").MatchString(text)
			assert.True(t, named, "docs/lua-api.md does not name %s", full)
		}
	}
	for _, m := range luarunModules {
		assert.Contains(t, text, "\n## "+m+"\n", "docs/lua-api.md has no section for %s", m)
	}
}

// TestLuaLSDefinitions: the editor definitions declare every function and
// field of luarun's own modules, and are valid Lua.
func TestLuaLSDefinitions(t *testing.T) {
	src, err := os.ReadFile(lualsPath)
	require.NoError(t, err)
	text := string(src)
	require.True(t, strings.HasPrefix(text, "---@meta"), "a LuaLS definitions file starts with ---@meta")
	_, err = Compile(lualsPath, text)
	require.NoError(t, err)
	all := registered(t)
	for _, m := range luarunModules {
		for _, name := range all[m] {
			declared := regexp.MustCompile(`(?m)^(function ` + m + `\.` + name + `\(|` + m + `\.` + name + ` = )`).MatchString(text)
			assert.True(t, declared, "docs/luals/luarun.lua does not declare %s.%s", m, name)
		}
	}
	for _, name := range all["package"] {
		declared := regexp.MustCompile(`(?m)^---@field ` + name + ` `).MatchString(text)
		assert.True(t, declared, "docs/luals/luarun.lua does not declare package.%s", name)
	}
}

// docExample is one ```lua block of the reference.
type docExample struct {
	line int // where it starts in the file
	src  string
	want []string // the text after each "-->", in order
}

func docExamples(t *testing.T, path string) []docExample {
	t.Helper()
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []docExample
	var cur *docExample
	for i, line := range strings.Split(string(doc), "\n") {
		switch {
		case cur == nil && line == "```lua":
			cur = &docExample{line: i + 1}
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.src += line + "\n"
			if _, after, ok := strings.Cut(line, "-->"); ok {
				cur.want = append(cur.want, strings.TrimPrefix(after, " "))
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestReferenceExamplesRun runs every example of the reference with every
// permission, HTTP served here (as http://example.com) and TMPDIR a
// directory of the test's, and checks what it prints.
func TestReferenceExamplesRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		body := make([]byte, r.ContentLength)
		r.Body.Read(body)
		switch r.URL.Path {
		case "/hello":
			fmt.Fprint(w, "hello")
		case "/echo":
			fmt.Fprintf(w, "%s %s", r.Method, body)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	for _, ex := range docExamples(t, referencePath) {
		t.Run(fmt.Sprintf("line %d", ex.line), func(t *testing.T) {
			stdout := &syncBuffer{}
			rt, _, _ := newTestRuntime(t, Options{Allow: Permissions(), Stdout: stdout})
			src := strings.ReplaceAll(ex.src, "http://example.com", srv.URL)
			s, err := rt.LoadString("example.lua", src)
			require.NoError(t, err, ex.src)
			h, err := rt.Start(context.Background(), s, "")
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = h.Wait(ctx)
			require.NoError(t, err, "the example at docs/lua-api.md:%d", ex.line)
			got := strings.ReplaceAll(stdout.String(), tmp, "/tmp")
			want := ""
			if len(ex.want) > 0 {
				want = strings.Join(ex.want, "\n") + "\n"
			}
			assert.Equal(t, want, got, "the example at docs/lua-api.md:%d prints", ex.line)
		})
	}
}

// TestReadmeExamplesRun runs the README's examples that show their
// output (--> comments), saved as example.lua, from main if they define
// it, and checks what they print.
func TestReadmeExamplesRun(t *testing.T) {
	ran := 0
	for _, ex := range docExamples(t, "../README.md") {
		if len(ex.want) == 0 {
			continue
		}
		ran++
		t.Run(fmt.Sprintf("line %d", ex.line), func(t *testing.T) {
			stdout := &syncBuffer{}
			rt, _, _ := newTestRuntime(t, Options{Stdout: stdout})
			entry := ""
			if strings.Contains(ex.src, "\nfunction main()") {
				entry = "main"
			}
			res, err := runLua(t, rt, "example.lua", ex.src, entry)
			require.NoError(t, err, "the example at README.md:%d (%v)", ex.line, res)
			assert.Equal(t, strings.Join(ex.want, "\n")+"\n", stdout.String(), "the example at README.md:%d prints", ex.line)
		})
	}
	require.NotZero(t, ran, "no README example shows its output")
}

// TestReadmeLinksExist: the README and the docs link only files a clone
// has.
func TestReadmeLinksExist(t *testing.T) {
	for _, doc := range []string{"../README.md", "../docs/lua-api.md", "../docs/architecture.md"} {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		dir := doc[:strings.LastIndex(doc, "/")]
		for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(string(text), -1) {
			_, err := os.Stat(dir + "/" + m[1])
			assert.NoError(t, err, "%s links %s", doc, m[1])
		}
		for _, gone := range []string{"LUA_API.md", "DESIGN.md"} {
			assert.False(t, slices.Contains(strings.Fields(string(text)), gone), "%s names %s, which a clone lacks", doc, gone)
			assert.NotContains(t, string(text), "`"+gone+"`", "%s names %s, which a clone lacks", doc, gone)
		}
	}
}
