package lua

import (
	"os"
	"testing"
)

// TestOsDateAs51 runs testdata/osdate.lua — every conversion character
// from ' ' to '~' at fixed UTC times (leap days, week-number edges,
// negative and huge years, fractional times), the "*t" table, times C
// cannot break down, and os_date's quirks (a lone '%', one '!' skipped,
// the format ending at a NUL) — and compares what it prints with
// lua5.1's output on x86-64 glibc (testdata/osdate51.txt; checkLua51
// checks that file against lua5.1 where it is installed).
func TestOsDateAs51(t *testing.T) {
	src, err := os.ReadFile("testdata/osdate.lua")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/osdate51.txt")
	if err != nil {
		t.Fatal(err)
	}
	checkLua51(t, string(src), string(want))
}

// TestOsDateLocal checks the local-time forms against Go's idea of the
// local zone (lua5.1 and the test share TZ, but the expectation must not
// depend on the machine's zone).
func TestOsDateLocal(t *testing.T) {
	check51(t, [][2]string{
		{`print(os.date("%Y-%m-%d %H:%M:%S", 0) == os.date("%F %T", 0), os.date("%s", 1700000000))`, "true\t1700000000"},
		{`local t = os.date("*t", 1700000000) print(os.time(t))`, "1700000000"},
		{`print(os.date(2023), os.date(nil, 0) == os.date("%c", 0))`, "2023\ttrue"},
	})
}
