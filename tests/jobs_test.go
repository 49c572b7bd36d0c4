package tests

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	jobDone    = regexp.MustCompile(`^job (\d+) done: (\d+)$`)
	jobFailed  = regexp.MustCompile(`^job (\d+) failed: job (\d+): bad input$`)
	jobSummary = regexp.MustCompile(`^(finished|interrupted) after [0-9.]+ s: (\d+) done, (\d+) failed, (\d+) cancelled, (\d+) not started; sum of results (\d+)$`)
)

// jobsOutput is what scripts/jobs.lua printed: the results of the jobs
// it reported, and its summary's figures.
type jobsOutput struct {
	done, failed map[int]bool
	sum          int
	how          string
	summary      [5]int // done, failed, cancelled, not started, sum
}

// scanJobs reads jobs.lua's output line by line, calling each (if not
// nil) after every job line, and checks every line's form.
func scanJobs(t *testing.T, sc *bufio.Scanner, each func(out *jobsOutput)) jobsOutput {
	t.Helper()
	out := jobsOutput{done: map[int]bool{}, failed: map[int]bool{}}
	for sc.Scan() {
		line := sc.Text()
		require.Empty(t, out.how, "a line after the summary: %q", line)
		if m := jobDone.FindStringSubmatch(line); m != nil {
			id, _ := strconv.Atoi(m[1])
			result, _ := strconv.Atoi(m[2])
			assert.Equal(t, id*id, result, line)
			out.done[id] = true
			out.sum += result
		} else if m := jobFailed.FindStringSubmatch(line); m != nil {
			id, _ := strconv.Atoi(m[1])
			assert.Equal(t, m[1], m[2])
			assert.Zero(t, id%9, "only every 9th job fails: %s", line)
			out.failed[id] = true
		} else if m := jobSummary.FindStringSubmatch(line); m != nil {
			out.how = m[1]
			for i := range out.summary {
				out.summary[i], _ = strconv.Atoi(m[i+2])
			}
			continue
		} else {
			t.Fatalf("unexpected line %q", line)
		}
		if each != nil {
			each(&out)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// TestJobsScript: scripts/jobs.lua runs every job and sums up; stopped
// with SIGINT midway, it still prints the summary of what it did — its
// main process traps exits, so the shutdown reaches it as an event — and
// the summary accounts for every job: done, failed, cancelled while
// running, or never started.
func TestJobsScript(t *testing.T) {
	t.Run("to the end", func(t *testing.T) {
		r := runLuarun(t, "", "scripts/jobs.lua", "20", "5")
		require.Equal(t, 0, r.code, r.stderr)
		out := scanJobs(t, bufio.NewScanner(bytes.NewReader([]byte(r.stdout))), nil)
		assert.Equal(t, "finished", out.how)
		assert.Len(t, out.done, 18)
		assert.Equal(t, map[int]bool{9: true, 18: true}, out.failed)
		assert.Equal(t, [5]int{18, 2, 0, 0, 2465}, out.summary)
		assert.Equal(t, 2465, out.sum)
		assert.Empty(t, r.stderr, "the failures are monitored: no crash reports")
	})
	t.Run("interrupted", func(t *testing.T) {
		const jobs = 100000
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, luarun, "-w", strconv.Itoa(runtime.GOMAXPROCS(0)), "scripts/jobs.lua", strconv.Itoa(jobs), "4")
		cmd.Dir = ".."
		var errb bytes.Buffer
		cmd.Stderr = &errb
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		signalled := false
		out := scanJobs(t, bufio.NewScanner(stdout), func(out *jobsOutput) {
			if !signalled && len(out.done) >= 10 { // well under way
				require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
				signalled = true
			}
		})
		err = cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr: %s", errb.String())
		assert.Equal(t, 130, ee.ExitCode())
		require.Equal(t, "interrupted", out.how, "stderr: %s", errb.String())
		s := out.summary
		assert.Equal(t, len(out.done), s[0], "done")
		assert.Equal(t, len(out.failed), s[1], "failed")
		assert.LessOrEqual(t, s[2], 4, "at most 4 running when stopped")
		assert.Equal(t, jobs, s[0]+s[1]+s[2]+s[3], "every job accounted for")
		assert.Equal(t, out.sum, s[4])
		assert.Contains(t, errb.String(), "luarun: interrupt: stopping every process")
		assert.NotContains(t, errb.String(), "abandoned")
		assert.NotContains(t, errb.String(), "crashed")
	})
}
