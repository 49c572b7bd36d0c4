package luaproc

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLuaSuites runs every test_* entry of every testdata/*.lua file as
// its own process. The entries are listed by asking for one that does not
// exist: the *EntryError names the real ones.
func TestLuaSuites(t *testing.T) {
	files, err := filepath.Glob("testdata/*.lua")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	// Four workers whatever -cpu says: test_kill_busy_loop needs a worker
	// besides the one its busy loop occupies (a Lua process yields only at
	// blocking calls; nothing preempts it).
	rt, _, _ := newTestRuntime(t, Options{Workers: 4, Allow: []string{"os", "io"}})
	for _, file := range files {
		s, err := rt.LoadFile(file)
		require.NoError(t, err)
		for _, entry := range luaTests(t, rt, s) {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".lua")+"/"+entry, func(t *testing.T) {
				t.Parallel()
				h, err := rt.Start(context.Background(), s, entry)
				require.NoError(t, err)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_, err = h.Wait(ctx)
				if err != nil {
					var se *ScriptError
					if errors.As(err, &se) {
						t.Fatalf("%s\n%s", se.Message, se.Traceback)
					}
					t.Fatal(err)
				}
			})
		}
	}
}

func luaTests(t *testing.T, rt *Runtime, s *Script) []string {
	h, err := rt.Start(context.Background(), s, "no such entry")
	require.NoError(t, err)
	_, err = h.Wait(context.Background())
	var ee *EntryError
	require.ErrorAs(t, err, &ee)
	var tests []string
	for _, e := range ee.Entries {
		if strings.HasPrefix(e, "test_") {
			tests = append(tests, e)
		}
	}
	require.NotEmpty(t, tests, "%s has no test_ entries", s.Name())
	return tests
}
