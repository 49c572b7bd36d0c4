package main

// The Lua library beside lua5.4: common idioms, each timed inside the
// script (so the input's making is not counted: luarun's wall time,
// lua5.4's os.clock) by luarun (the
// binary, built here) and by lua5.4, at n and 10n to show them linear.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/luarun/luarun/bench/idioms"
)

// stdlibLua runs one idiom of bench/idioms at size n and prints its
// seconds. It runs unchanged under lua5.4 (the last line) and luarun
// (main).
const stdlibLua = idioms.Lua + `
-- wall time under luarun (its IO goroutines and GC run beside the
-- process); lua5.4 has only os.clock, its CPU time, which is its wall
-- time or less
local clock = time and time.monotonic or os.clock

function main(idiom, n)
  local run = idioms[idiom](tonumber(n))
  local t0 = clock()
  run()
  print(string.format("%.6f", clock() - t0))
end

if not process then main(...) end
`

// stdlibIdioms: name, what it does, base n, and whether the library call
// dominates (the ≤ 2× target applies) or the interpreter's call overhead
// does.
var stdlibIdioms = []struct {
	name, what string
	n          int
	library    bool
}{
	{"gsub", `s:gsub("%s+", " ") over n lines`, 20000, true},
	{"find", `s:find("\n[^\n]*$") over n lines`, 20000, true},
	{"match", `line:match("svc=(%w+) path=(%S+) status=(%d+)") on n lines`, 20000, true},
	{"gmatch", `for l in s:gmatch("[^\n]+") over n lines`, 20000, true},
	{"upper", `s:upper() of n lines`, 20000, true},
	{"concat", `table.concat of n items`, 200000, true},
	{"sort", `table.sort of n numbers`, 100000, true},
	{"lines", `for l in fs.lines(path) over a file of n lines (lua5.4: io.lines)`, 100000, true},
	{"format", `string.format("%d %s %.2f", ...) n times`, 200000, false},
	{"insert_remove", `table.insert then table.remove, n each`, 300000, false},
	{"sub_byte", `s:sub(i, j) and s:byte(i), n each`, 300000, false},
	{"empty_call", `f(i, i) of an empty Lua function, n times`, 300000, false},
}

func stdlib() []row {
	dir, bin := luarunDir("luarun-stdlib")
	defer os.RemoveAll(dir)
	script := writeScript(dir, "idioms.lua", stdlibLua)
	lua54, err := exec.LookPath("lua5.4")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdlib: lua5.4 is not installed (apt-get install lua5.4): its column is empty")
	}
	timeOf := func(cmd string, idiom string, n int) float64 {
		return medianOf(3, func() float64 {
			out, err := exec.Command(cmd, script, idiom, strconv.Itoa(n)).Output()
			check(err)
			t, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			check(err)
			return t
		})
	}
	var rows []row
	for _, id := range stdlibIdioms {
		n := size(id.n, id.n/10)
		lr1, lr10 := timeOf(bin, id.name, n), timeOf(bin, id.name, 10*n)
		r := row{
			workload: fmt.Sprintf("%s, n = %d (10n: ×%.1f)", id.what, n, lr10/lr1),
			luarun:   fmt.Sprintf("%s; 10n %s", fmtSecs(lr1), fmtSecs(lr10)),
			baseline: "lua5.4 missing", floor: "—", ratio: "—",
			target: "≤ 2× lua5.4",
		}
		if !id.library {
			r.target = "interpreter-bound: beside the empty call"
		}
		if lua54 != "" {
			l1, l10 := timeOf(lua54, id.name, n), timeOf(lua54, id.name, 10*n)
			r.baseline = fmt.Sprintf("lua5.4 %s; 10n %s", fmtSecs(l1), fmtSecs(l10))
			r.ratio = fmt.Sprintf("%.2f× at n, %.2f× at 10n", lr1/l1, lr10/l10)
		}
		rows = append(rows, r)
	}
	return rows
}

func fmtSecs(s float64) string {
	if s < 0.001 {
		return fmt.Sprintf("%.0f µs", s*1e6)
	}
	return fmt.Sprintf("%.1f ms", s*1e3)
}

// medianOf is the median of runs calls of run.
func medianOf(runs int, run func() float64) float64 {
	ts := make([]float64, runs)
	for i := range ts {
		ts[i] = run()
	}
	return medianF(ts)
}

// luarunDir makes a temporary directory (the caller removes it) and
// builds luarun into it.
func luarunDir(pattern string) (dir, bin string) {
	dir, err := os.MkdirTemp("", pattern)
	check(err)
	return dir, buildLuarun(dir)
}

// writeScript writes src to dir/name and returns its path.
func writeScript(dir, name, src string) string {
	path := filepath.Join(dir, name)
	check(os.WriteFile(path, []byte(src), 0o644))
	return path
}

// buildLuarun builds the luarun binary into dir and returns its path.
func buildLuarun(dir string) string {
	bin := filepath.Join(dir, "luarun")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	check(build.Run())
	return bin
}
