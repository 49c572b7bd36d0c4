package lualib

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHugeRangesAsLua51: integer arguments out of a C int's or long's
// range (math.huge, NaN, 2^31, 2^40, 2^32+k) to unpack, select,
// string.sub/byte/char/find/gsub, table.concat/remove, math.random,
// ldexp and tonumber give lua5.1's answers on x86-64
// (testdata/ranges.out), never a Go index error: unpack(t, 2, math.huge)
// panicked with "index out of range [20] with length 20".
func TestHugeRangesAsLua51(t *testing.T) {
	src, err := os.ReadFile("testdata/ranges.lua")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/ranges.out")
	require.NoError(t, err)
	got := runLua(t, "ranges.lua", string(src))
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	require.Equal(t, len(wantLines), len(gotLines), got)
	for i := range wantLines {
		assert.Equal(t, wantLines[i], gotLines[i], "ranges.out line %d", i+1)
	}
	if _, err := exec.LookPath("lua5.1"); err == nil {
		assert.Equal(t, string(want), lua51(t, "ranges.lua", string(src)), "testdata/ranges.out is not lua5.1's output: regenerate it")
	}
}

// TestUnpackBeyondTheStack: a range whose count overflows a C int
// (lua5.1 itself crashes on it) or passes the stack's room is 5.1's
// "too many results to unpack", raised before anything is pushed (a
// bare state has 5120 slots; a luarun process 2^20).
func TestUnpackBeyondTheStack(t *testing.T) {
	got := runLua(t, "unpack.lua", `
print(pcall(unpack, {}, -2^31, 2^31 - 1))
print(pcall(unpack, {}, 1, 2^31 - 1))
print(select("#", unpack({}, 1, 4000)))`)
	assert.Equal(t, "false\ttoo many results to unpack\nfalse\ttoo many results to unpack\n4000\n", got)
}
