package luaproc_test

// The library's dependencies: what an application that embeds luarun
// builds. The luarun command's terminal output (charmbracelet/log and its
// styling modules) is the command's alone.

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryPullsInNoTerminalStyling: no package an embedder imports
// depends on charmbracelet's modules, lipgloss or termenv.
func TestLibraryPullsInNoTerminalStyling(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies")
	}
	pkgs := []string{"github.com/luarun/luarun/luaproc", "github.com/luarun/luarun/cluster",
		"github.com/luarun/luarun/serve", "github.com/luarun/luarun/commands"}
	out, err := exec.Command(gobin, append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, styling := range []string{"charmbracelet", "lipgloss", "termenv", "go-colorful"} {
			if strings.Contains(dep, styling) {
				t.Errorf("the library depends on %s", dep)
			}
		}
	}
}
