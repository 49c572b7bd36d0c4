package luaproc_test

// luaproc is the one package an application embeds luarun with: the
// README's Go program and this package's Examples import nothing else of
// luarun's, and no exported signature of luaproc makes an application
// name a type of the scheduler or payload packages (except the few
// places meant for those who want the layer below: listed in
// belowAllowed).

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luarun/luarun/luaproc"
)

const luaprocPath = "github.com/luarun/luarun/luaproc"

// goBlock matches a fenced Go block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// luarunImports lists the packages of luarun that src (a Go file) imports,
// other than luaproc.
func luarunImports(t *testing.T, name, src string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
	require.NoError(t, err, "parsing %s", name)
	var out []string
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		if strings.HasPrefix(path, "github.com/luarun/luarun") && path != luaprocPath {
			out = append(out, path)
		}
	}
	return out
}

// TestEmbeddingImportsOnlyLuaproc: the README's Go program (the Go blocks
// that import luaproc) and luaproc's Examples import luaproc alone.
func TestEmbeddingImportsOnlyLuaproc(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	assert.Empty(t, luarunImports(t, "example_test.go", string(src)), "luaproc/example_test.go")

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	programs := 0
	for i, m := range goBlock.FindAllSubmatch(readme, -1) {
		block := string(m[1])
		if !strings.Contains(block, `"`+luaprocPath+`"`) {
			continue
		}
		programs++
		assert.Empty(t, luarunImports(t, "README.md block "+strconv.Itoa(i+1), block), "README.md's Go block %d", i+1)
	}
	assert.NotZero(t, programs, "README.md has no Go program that imports luaproc")
}

// belowAllowed are the exported declarations of luaproc whose signatures
// may name the scheduler's or payload's types: the doors to the layer
// below. The contract with the cluster package is not one: it lies in
// internal/nodelink, out of ClusterNode's method set.
var belowAllowed = map[string]bool{
	"Runtime.SchedulerStats": true, // the scheduler's own counters, on purpose
}

// TestAPINamesOnlyLuaprocTypes: no exported function, method, field or
// interface method of luaproc's (outside belowAllowed) has a parameter,
// result or field of a scheduler or payload type; aliases (PID,
// ShutdownError, ValueError) are luaproc's names for them, documented
// here. go doc ./luaproc is then the whole API.
func TestAPINamesOnlyLuaprocTypes(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var leaks []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			for _, where := range belowInDecl(decl) {
				leaks = append(leaks, name+": "+where)
			}
		}
	}
	assert.Empty(t, leaks, "exported API naming the scheduler or payload packages")
}

// belowInDecl lists the exported names in decl whose types mention the
// scheduler or payload packages, as "Name: scheduler.X".
func belowInDecl(decl ast.Decl) []string {
	var out []string
	report := func(name string, n ast.Node) {
		if belowAllowed[name] {
			return
		}
		for _, sel := range belowSelectors(n) {
			out = append(out, name+": "+sel)
		}
	}
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		name := d.Name.Name
		if d.Recv != nil {
			recv := receiverName(d.Recv.List[0].Type)
			if !ast.IsExported(recv) {
				return nil
			}
			name = recv + "." + name
		}
		report(name, d.Type)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() || ts.Assign.IsValid() {
				continue // aliases are luaproc's documented names
			}
			report(ts.Name.Name, exportedParts(ts.Type))
		}
	}
	return out
}

// exportedParts is a type with its unexported struct fields left out.
func exportedParts(e ast.Expr) ast.Node {
	st, ok := e.(*ast.StructType)
	if !ok {
		return e
	}
	fields := &ast.FieldList{}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.IsExported() {
				fields.List = append(fields.List, f)
				break
			}
		}
		if len(f.Names) == 0 { // embedded
			fields.List = append(fields.List, f)
		}
	}
	return fields
}

// belowPackages are the packages under luaproc whose names its API must
// not show (an internal one's least of all: an application cannot even
// import it).
var belowPackages = map[string]bool{"scheduler": true, "payload": true, "nodelink": true}

// belowSelectors lists scheduler.X, payload.X and nodelink.X in n.
func belowSelectors(n ast.Node) []string {
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && belowPackages[id.Name] {
				out = append(out, id.Name+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// receiverName is the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestCallCompleteValues: Complete's arguments are the Lua call's return
// values — none, one (a slice is one list), several — and Fail's error is
// nil and its message.
func TestCallCompleteValues(t *testing.T) {
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer rt.Shutdown(context.Background())
	require.NoError(t, rt.Register("app.answer", func(c luaproc.Call) error {
		switch c.Args[0] {
		case "none":
			c.Complete()
		case "one":
			c.Complete([]string{"a", "b"})
		case "two":
			go c.Complete(nil, "not found")
		case "fail":
			c.Fail(errors.New("no such row"))
		}
		return nil
	}))
	s, err := rt.LoadString("answer.lua", `
		function main(how) return select("#", app.answer(how)), app.answer(how) end`)
	require.NoError(t, err)
	for how, want := range map[string][]any{
		"none": {int64(0)},
		"one":  {int64(1), []any{"a", "b"}},
		"two":  {int64(2), nil, "not found"},
		"fail": {int64(2), nil, "no such row"},
	} {
		h, err := rt.Start(context.Background(), s, "main", how)
		require.NoError(t, err)
		res, err := h.Wait(context.Background())
		require.NoError(t, err, how)
		for len(res) < len(want) { // a process's results end at the last non-nil
			res = append(res, nil)
		}
		assert.Equal(t, want, res, how)
	}
}

// TestReexportedErrors: the errors an application tests for are
// luaproc's names, and Stats adds up.
func TestReexportedErrors(t *testing.T) {
	rt, err := luaproc.New(luaproc.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := rt.LoadString("wait.lua", `function main() process.receive() end`)
	require.NoError(t, err)
	ctx := context.Background()
	h, err := rt.Start(ctx, s, "main")
	require.NoError(t, err)
	in, err := rt.NewInbox()
	require.NoError(t, err)
	require.NoError(t, rt.RegisterName("waiter", h.PID()))
	assert.ErrorIs(t, rt.RegisterName("waiter", in.PID()), luaproc.ErrNameTaken)
	pid, ok := rt.Whereis("waiter")
	assert.True(t, ok)
	assert.Equal(t, h.PID(), pid)
	got, ok := rt.Lookup(h.PID())
	require.True(t, ok)
	assert.Equal(t, h.PID(), got.PID())

	require.NoError(t, rt.Shutdown(ctx))
	_, err = h.Wait(ctx)
	assert.ErrorIs(t, err, luaproc.ErrShutdown)
	assert.ErrorIs(t, rt.Send(h.PID(), "late"), luaproc.ErrNoProcess)
	st := rt.Stats()
	assert.Equal(t, st.Started, st.Returned+st.Failed+st.Killed+st.Cancelled+st.Abandoned+uint64(st.Live), "%+v", st)
	assert.Equal(t, uint64(2), st.Started, "the process and the inbox")
	assert.Equal(t, uint64(1), st.Cancelled, "the process (the inbox ends without an error)")
}
