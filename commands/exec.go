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
// On Unix the group is killed after a normal exit too: background
// children of a command (`sleep 60 &`) do not outlive it.
//
// stdout and stderr are each collected up to the IO's cap (256 MiB): a
// command writing more has its context cancelled with a tooLargeError as
// the cause, which kills it (and its group) like a timeout, and the call
// fails ("output larger than 256 MiB").
//
// An exit with any code is a result ({code=, stdout=, stderr=}); errors are
// a command that could not start, one killed by a signal, a timeout, and
// too much output (the last two with the output so far: PartialError).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/luarun/luarun/procgroup"
	"github.com/luarun/luarun/scheduler"
)

// execWaitDelay is how long exec.run waits for the child's output pipes to
// close once the child has exited or been killed.
const execWaitDelay = time.Second

// command is an exec.run call's arguments.
type command struct {
	name    string
	args    []string
	dir     string
	stdin   string
	timeout time.Duration
	maxOut  int64    // the cap on stdout and on stderr
	env     []string // the child's environment, NAME=value; nil: luarun's own
}

// execRunOptions are the keys of exec.run's options table.
var execRunOptions = []string{"stdin", "dir", "timeout", "env", "clear_env"}

// execRun: exec.run(cmd, {args...} [, {stdin=, dir=, timeout=}]).
func (o *IO) execRun(c scheduler.Call) error {
	cmd, err := parseCommand(c.Args)
	if err != nil {
		return err
	}
	cmd.maxOut = o.maxData
	label := "exec.run " + cmd.name
	o.startCall(c, func() {
		res, err := cmd.run(c.Ctx)
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

// parseCommand reads exec.run's arguments.
func parseCommand(args []any) (*command, error) {
	name, err := argString(args, 0)
	if err == nil && name == "" {
		err = errors.New("argument 1: empty command")
	}
	if err == nil {
		err = noNUL(name, "argument 1")
	}
	if err != nil {
		return nil, err
	}
	list, err := argStrings(args, 1)
	if err != nil {
		return nil, err
	}
	opts, err := argOptions(args, 2, execRunOptions...)
	if err != nil {
		return nil, err
	}
	cmd := &command{name: name, args: list}
	if err := cmd.parseOptions(opts); err != nil {
		return nil, fmt.Errorf("argument 3: %w", err)
	}
	return cmd, nil
}

// parseOptions reads exec.run's options table.
func (cmd *command) parseOptions(opts map[string]any) error {
	var err error
	if cmd.stdin, err = optString(opts, "stdin"); err != nil {
		return err
	}
	if cmd.dir, err = optString(opts, "dir"); err == nil {
		err = noNUL(cmd.dir, "dir")
	}
	if err != nil {
		return err
	}
	if cmd.env, err = optEnv(opts); err != nil {
		return err
	}
	cmd.timeout, err = optTimeout(opts, 0)
	return err
}

// optEnv reads opts.env and opts.clear_env into a child's environment:
// nil (luarun's own) when neither is given. env's entries are added to
// luarun's environment (replacing a variable of the same name) or, with
// clear_env = true, to an empty one; an entry set to false removes the
// variable.
func optEnv(opts map[string]any) ([]string, error) {
	clear, ok := opts["clear_env"].(bool)
	if !ok && opts["clear_env"] != nil {
		return nil, fmt.Errorf("clear_env: boolean expected, got %s", luaType(opts["clear_env"]))
	}
	if opts["env"] == nil && !clear {
		return nil, nil
	}
	vars := map[string]string{}
	if !clear {
		for _, kv := range os.Environ() {
			name, value, _ := strings.Cut(kv, "=")
			vars[name] = value
		}
	}
	if opts["env"] != nil {
		if err := mergeEnv(vars, opts["env"]); err != nil {
			return nil, fmt.Errorf("env: %w", err)
		}
	}
	env := make([]string, 0, len(vars))
	for name, value := range vars {
		env = append(env, name+"="+value)
	}
	sort.Strings(env)
	return env, nil
}

// mergeEnv sets (or, for false, removes) the variables of table t in vars.
func mergeEnv(vars map[string]string, t any) error {
	m, err := asTable(t)
	if err != nil {
		return err
	}
	for name, v := range m {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return fmt.Errorf("invalid variable name %q", name)
		}
		if v == false {
			delete(vars, name)
			continue
		}
		s, ok := scalarString(v)
		if !ok {
			return fmt.Errorf("%s: string expected, got %s", name, luaType(v))
		}
		if err := noNUL(s, name); err != nil {
			return err
		}
		vars[name] = s
	}
	return nil
}

// run runs the command and returns the result table.
func (cmd *command) run(parent context.Context) (map[string]any, error) {
	if err := checkDir(cmd.dir); err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(parent, cmd.timeout)
	defer cancel()
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	ec := exec.CommandContext(ctx, cmd.name, cmd.args...)
	ec.Dir = cmd.dir
	ec.Env = cmd.env
	if cmd.stdin != "" { // else the child reads /dev/null: EOF either way
		ec.Stdin = strings.NewReader(cmd.stdin)
	}
	stdout := &cappedBuffer{limit: cmd.maxOut, cancel: cancelCause}
	stderr := &cappedBuffer{limit: cmd.maxOut, cancel: cancelCause}
	ec.Stdout, ec.Stderr = stdout, stderr
	ec.WaitDelay = execWaitDelay
	killGroup(ec)
	release := holdThread() // the parent-death signal's thread (exec_linux.go)
	err := ec.Start()
	if err == nil {
		procgroup.Started(ec.Process) // luarun's exit kills it (and its group)
		err = ec.Wait()
		procgroup.Ended(ec.Process)
	}
	release()
	endGroup(ec)
	if ctx.Err() != nil && parent.Err() == nil { // the timeout, or too much output
		return nil, &PartialError{Err: context.Cause(ctx), Partial: map[string]any{
			"stdout": ownedString(stdout.buf.Bytes()),
			"stderr": ownedString(stderr.buf.Bytes()),
		}}
	}
	if err := exitError(err); err != nil {
		return nil, err
	}
	return map[string]any{
		"code": int64(ec.ProcessState.ExitCode()),
		// Run has returned: nothing writes to the buffers any more
		"stdout": ownedString(stdout.buf.Bytes()),
		"stderr": ownedString(stderr.buf.Bytes()),
	}, nil
}

// PartialError is a command's failure that comes with what it had done:
// exec.run's timeout, with the output the command wrote before it was
// killed ({stdout=, stderr=}). Lua gets nil, the error, and Partial.
type PartialError struct {
	Err     error
	Partial any // a payload value
}

func (e *PartialError) Error() string { return e.Err.Error() }
func (e *PartialError) Unwrap() error { return e.Err }

// checkDir checks opts.dir here: a failed chdir in the child is reported
// by Go as "fork/exec <cmd>: no such file or directory", blaming the
// command.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("dir %s: %w", dir, sysError(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("dir %s: not a directory", dir)
	}
	return nil
}

// exitError tells which error of Cmd.Run fails the call: none for an exit
// with any code.
func exitError(err error) error {
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: it exited with 0, but something it started kept
		// its output open; the output until then is the result.
		return nil
	case errors.As(err, &ee) && ee.Exited():
		return nil // any exit code is a result
	case errors.As(err, &ee):
		return fmt.Errorf("terminated (%s)", ee.ProcessState) // "signal: killed"
	}
	return startError(err)
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

// cappedBuffer collects an output stream up to limit bytes; one more
// cancels the command's context (killing it) with a tooLargeError.
type cappedBuffer struct {
	buf    bytes.Buffer
	limit  int64
	cancel context.CancelCauseFunc
}

func (w *cappedBuffer) Write(p []byte) (int, error) {
	if int64(w.buf.Len())+int64(len(p)) > w.limit {
		err := tooLargeError{"output", w.limit}
		w.cancel(err)
		return 0, err
	}
	return w.buf.Write(p)
}
