package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogaggScript: scripts/logagg.lua generates a log of 30,000 lines,
// parses it with 3 processes and writes a summary that accounts for every
// line (the data are deterministic: 6,000 requests per service).
func TestLogaggScript(t *testing.T) {
	dir := t.TempDir()
	r := runLuarun(t, "", "scripts/logagg.lua", "30000", "3", dir)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^30000 lines \(2\.2 MB\) parsed by 3 processes in [0-9.]+ s; summary in .*/summary\.json\n$`, r.stdout)
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if line != "" { // a slow machine (-race) may see the watchdog's note of a long step
			assert.Contains(t, line, "without blocking")
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	var summary struct {
		Lines, Bad int
		Services   map[string]struct {
			Requests, Errors int
			MeanMs           int `json:"mean_ms"`
		}
	}
	require.NoError(t, json.Unmarshal(data, &summary))
	assert.Equal(t, 30000, summary.Lines)
	assert.Zero(t, summary.Bad)
	require.Len(t, summary.Services, 5)
	total := 0
	for _, s := range summary.Services {
		assert.Equal(t, 6000, s.Requests)
		total += s.Requests
	}
	assert.Equal(t, 30000, total)
}
