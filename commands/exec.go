package commands

// exec.run starts a program directly (never through a shell: the
// arguments are a list) on a goroutine of its own and collects its output.
// The child is started with exec.CommandContext on the calling process's
// context, plus opts.timeout if given: a kill or a timeout kills the child
// and, on Unix, its whole process group (the child leads a new one), so a
// shell's children die too. WaitDelay bounds how long output pipes held
// open by a grandchild that escaped (or a daemon the command started) can
// keep Wait from returning.
//
// An exit with any code is a result ({code=, stdout=, stderr=}); errors are
// a command that could not start, one killed by a signal, and a timeout.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/luarun/luarun/scheduler"
)

// execWaitDelay is how long exec.run waits for the child's output pipes to
// close once the child has exited or been killed.
const execWaitDelay = time.Second

// execRun: exec.run(cmd, {args...} [, {stdin=, dir=, timeout=}]).
func (o *IO) execRun(c scheduler.Call) error {
	name, err := argString(c.Args, 0)
	if err == nil && name == "" {
		err = errors.New("argument 1: empty command")
	}
	if err != nil {
		return err
	}
	args, err := argStrings(c.Args, 1)
	if err != nil {
		return err
	}
	opts, err := argTable(c.Args, 2)
	if err != nil {
		return err
	}
	stdin, err := optString(opts, "stdin")
	if err != nil {
		return fmt.Errorf("argument 3: %w", err)
	}
	dir, err := optString(opts, "dir")
	if err != nil {
		return fmt.Errorf("argument 3: %w", err)
	}
	timeout, err := optTimeout(opts, 0)
	if err != nil {
		return fmt.Errorf("argument 3: %w", err)
	}
	_, hasStdin := opts["stdin"]
	label := "exec.run " + name
	o.goroutines.Go(func() {
		res, err := runCommand(c.Ctx, name, args, dir, stdin, hasStdin, timeout)
		if err != nil {
			if c.Ctx.Err() != nil {
				err = context.Cause(c.Ctx) // killed: nobody reads this
			} else {
				err = fmt.Errorf("%s: %w", label, err)
			}
			c.Fail(err)
			return
		}
		c.Complete(res)
	})
	return nil
}

// runCommand runs name with args and returns the result table.
func runCommand(parent context.Context, name string, args []string, dir, stdin string, hasStdin bool, timeout time.Duration) (map[string]any, error) {
	if dir != "" {
		// Checked here: a failed chdir in the child is reported by Go as
		// "fork/exec <cmd>: no such file or directory", blaming the command.
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("dir %s: %w", dir, sysError(err))
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("dir %s: not a directory", dir)
		}
	}
	ctx, cancel := withTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if hasStdin {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = execWaitDelay
	killGroup(cmd)
	err := cmd.Run()
	if ctx.Err() != nil && parent.Err() == nil {
		return nil, context.Cause(ctx) // the timeout
	}
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: it exited with 0, but something it started kept
		// its output open; the output until then is the result.
	case errors.As(err, &ee) && ee.Exited():
		// any exit code is a result
	case errors.As(err, &ee):
		return nil, fmt.Errorf("killed by %s", ee.ProcessState) // "signal: killed"
	default:
		return nil, startError(err)
	}
	return map[string]any{
		"code":   int64(cmd.ProcessState.ExitCode()),
		"stdout": stdout.String(),
		"stderr": stderr.String(),
	}, nil
}

// startError peels Go's `exec: "name":` and `fork/exec path:` off an error
// starting a command.
func startError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return sysError(err)
}

// argStrings reads Args[i] as a list of strings; nil or missing is none.
func argStrings(args []any, i int) ([]string, error) {
	if i >= len(args) || args[i] == nil {
		return nil, nil
	}
	list, ok := args[i].([]any)
	if !ok {
		return nil, fmt.Errorf("argument %d: list of strings expected, got %T", i+1, args[i])
	}
	out := make([]string, len(list))
	for j, v := range list {
		s, ok := scalarString(v)
		if !ok {
			return nil, fmt.Errorf("argument %d: list of strings expected, got %T at [%d]", i+1, v, j+1)
		}
		out[j] = s
	}
	return out, nil
}
