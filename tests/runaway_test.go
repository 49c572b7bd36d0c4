package tests

import (
	"bufio"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBusyProcessDoesNotStopTheProgram: with one worker, a process in an
// endless loop does not keep main from finishing (exit 0, at once).
func TestBusyProcessDoesNotStopTheProgram(t *testing.T) {
	path := writeScript(t, "spin.lua", `
function spin()
  local n = 0
  while true do n = n + 1 end
end
function main()
  process.spawn("spin")
  for i = 1, 5 do time.sleep(0.01) end
  print("main finished")
end`)
	r := runLuarunIn(t, "..", nil, "", "-w", "1", "--stats", path)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "main finished\n", r.stdout)
	assert.Contains(t, r.stderr, "1 cancelled at exit")
	t.Logf("took %v", r.took)
}

// TestMaxStepAndTheWarning: --max-step kills a loop with its line; without
// it, the loop is reported once, with its line.
func TestMaxStepAndTheWarning(t *testing.T) {
	path := writeScript(t, "spin.lua", "local n = 0\nwhile true do\n  n = n + 1\nend\n")
	r := runLuarun(t, "", "--max-step", "200ms", path)
	assert.Equal(t, 1, r.code)
	// (?m): with --max-step set the slow-step warning is always written,
	// and it comes first when load gives the loop less than a fifth of a
	// core: the limit counts the CPU time the step had, the warning wall
	// time (1 s)
	assert.Regexp(t, `(?m)^luarun: pid 1 `+regexp.QuoteMeta(path)+`:[234]: ran 200ms without blocking\nstack traceback:\n`, r.stderr)

	// the warning is for a loop that keeps others waiting: here a process
	// it spawned, on the only worker
	crowded := writeScript(t, "crowded.lua", "function quick() end\nfunction main()\n  process.spawn('quick')\n  local n = 0\n  while true do\n    n = n + 1\n  end\nend\n")
	r = runLuarunIn(t, "..", nil, "", "-w", "1", "--timeout", "2500ms", crowded)
	assert.Equal(t, 124, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, "without blocking"), r.stderr)
	assert.Regexp(t, `pid 1 `+regexp.QuoteMeta(crowded)+`:[567]: has run for 1(\.\d+)?s without blocking`, r.stderr)
}

// TestInterruptBusyProcess: SIGINT ends a process in an endless loop at
// once (the grace period is a minute) and luarun exits 130.
func TestInterruptBusyProcess(t *testing.T) {
	path := writeScript(t, "spin.lua", `
function main()
  print("spinning")
  local n = 0
  while true do n = n + 1 end
end`)
	cmd := exec.Command(luarun, "--shutdown-timeout", "60s", path)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "spinning\n", line)
	t0 := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	took := time.Since(t0)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.ExitCode())
	assert.Less(t, took, 30*time.Second, "not the grace period")
	t.Logf("ended %v after SIGINT", took)
}

// TestOsExitInAChild: os.exit(7) in a spawned process ends the program
// through the shutdown — exit status 7, and the exec child of another
// process killed.
func TestOsExitInAChild(t *testing.T) {
	marker := "luarun-exit-test-" + strconv.Itoa(time.Now().Nanosecond())
	path := writeScript(t, "exit.lua", `
function sleeper(tag) exec.run("sh", {"-c", "exec sleep 300", tag}) end
function quitter(boss) process.send(boss, "go"); os.exit(7) end
function main(tag)
  process.spawn("sleeper", tag)
  time.sleep(0.1)
  process.spawn("quitter", process.self())
  process.receive()
  time.sleep(60)
end`)
	r := runLuarun(t, "", path, marker)
	assert.Equal(t, 7, r.code, r.stderr)
	assert.Less(t, r.took, 30*time.Second)
	assertNoProcess(t, marker)
}

// TestKilledLuarunLeavesNoChild: SIGKILL of luarun kills its exec children
// too (Linux: the parent-death signal).
func TestKilledLuarunLeavesNoChild(t *testing.T) {
	marker := "luarun-kill9-test-" + strconv.Itoa(time.Now().Nanosecond())
	path := writeScript(t, "child.lua", `
function main(tag)
  print("starting")
  exec.run("sh", {"-c", "echo started; exec sleep 300", tag})
end`)
	cmd := exec.Command(luarun, path, marker)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	rd := bufio.NewReader(stdout)
	_, err = rd.ReadString('\n')
	require.NoError(t, err)
	waitForProcess(t, marker)
	require.NoError(t, cmd.Process.Kill())
	cmd.Wait()
	assertNoProcess(t, marker)
}

// waitForProcess waits until a process whose command line contains
// marker runs.
func waitForProcess(t *testing.T, marker string) {
	t.Helper()
	for range 1000 {
		if out, _ := exec.Command("pgrep", "-f", marker).Output(); len(out) > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no process %s started", marker)
}

// assertNoProcess checks that no process with marker in its command line
// is left (the kernel delivers a death signal promptly, but give it time).
func assertNoProcess(t *testing.T, marker string) {
	t.Helper()
	for range 500 {
		if out, _ := exec.Command("pgrep", "-f", marker).Output(); len(out) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, _ := exec.Command("pgrep", "-af", marker).Output()
	t.Errorf("left running: %s", out)
	exec.Command("pkill", "-9", "-f", marker).Run()
}

// TestLimits: --max-mailbox (the harness floods with 10 million; here
// 200,000 keep the race run short), --max-procs, deep coroutine nesting, stack
// overflow, and a worker count out of range.
func TestLimits(t *testing.T) {
	flood := writeScript(t, "flood.lua", `
function deaf() time.sleep(math.huge) end
function main()
  local pid = process.spawn("deaf")
  local ok, refused, err = 0, 0
  for i = 1, 200000 do
    local r, e = process.send(pid, i)
    if r then ok = ok + 1 else refused, err = refused + 1, e end
  end
  print(ok, refused, err)
end`)
	r := runLuarun(t, "", "--max-mailbox", "1000", "--stats", flood)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "1000\t199000\tmailbox full\n", r.stdout)
	assert.Contains(t, r.stderr, "199000 refused (--max-mailbox)")

	storm := writeScript(t, "storm.lua", `
function idle() process.receive() end
function main()
  local n = 0
  while process.spawn("idle") do n = n + 1 end
  print(n, select(2, process.spawn("idle")))
  os.exit(0)
end`)
	r = runLuarun(t, "", "--max-procs", "100", storm)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "99\tprocess limit reached (see --max-procs, Options.MaxProcs)\n", r.stdout)

	nest := writeScript(t, "nest.lua", `
local depth = 0
local function nest() depth = depth + 1; coroutine.wrap(nest)() end
print(pcall(nest))
print(depth)`)
	r = runLuarun(t, "", nest)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "false\tC stack overflow (coroutines, pcalls and xpcalls nested more than 200 deep)\n200\n", r.stdout)

	deep := writeScript(t, "deep.lua", "local function f() return 1 + f() end\nf()\n")
	r = runLuarun(t, "", deep)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "luarun: "+deep+":1: stack overflow\nstack traceback:\n\t"+deep+":1: in function 'f'"), r.stderr)

	r = runLuarun(t, "", "-w", "30000", "scripts/hello.lua")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--workers 30000: choose 1 to 1024")
}
