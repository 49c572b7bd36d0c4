package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/log"
	"github.com/urfave/cli/v2"

	"github.com/luarun/luarun/luaproc"
	"github.com/luarun/luarun/scheduler"
)

const defaultGrace = 5 * time.Second

// runScript runs the main process and returns the exit status. An error
// it returns is a usage error, printed by run.
func runScript(c *cli.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if c.NArg() == 0 {
		return exitUsage, cli.Exit("no script given\n(usage: luarun [flags] script.lua [args...]; luarun --help)", exitUsage)
	}
	allow, err := permissions(c.Bool("sandbox"), c.StringSlice("allow"))
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	logger, err := newLogger(stderr, c.String("log-level"), c.String("log-format"))
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	if c.Int("workers") < 1 {
		return exitUsage, cli.Exit("--workers must be at least 1", exitUsage)
	}
	rt := luaproc.New(luaproc.Options{Workers: c.Int("workers"), Allow: allow, Logger: logger, Stdout: stdout, LuaPath: os.Getenv("LUA_PATH")})
	script, err := load(rt, c.Args().First(), stdin)
	if err != nil {
		shutdown(rt, 0, stderr)
		return exitUsage, cli.Exit(err, exitUsage)
	}
	var args []any
	for _, a := range c.Args().Tail() {
		args = append(args, a)
	}
	h, err := rt.Start(script, c.String("entry"), args...)
	if err != nil {
		shutdown(rt, 0, stderr)
		return exitError, cli.Exit(err, exitError)
	}

	status := wait(rt, h, c.Duration("timeout"), c.Duration("shutdown-timeout"), stderr)
	if c.Bool("stats") {
		printStats(stderr, rt.Stats())
	}
	if status != exitOK {
		return status, nil
	}
	if _, err := h.Result(); err != nil {
		return reportFailure(err, stderr), nil
	}
	return exitOK, nil
}

// wait waits for the main process, a --timeout or a signal, then shuts
// the runtime down with the grace period. It returns 124 or 130 for a
// timeout or a signal, else 0 (the main process's own result decides).
func wait(rt *luaproc.Runtime, h scheduler.Handle, timeout, grace time.Duration, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	status := exitOK
	select {
	case <-h.Done():
	case <-expired:
		fmt.Fprintf(stderr, "luarun: timeout: the main process ran longer than %v\n", timeout)
		rt.Kill(h.PID(), "timeout")
		status = exitTimeout
	case sig := <-sigs:
		fmt.Fprintf(stderr, "luarun: %v: stopping every process (up to %v; again to exit now)\n", sig, grace)
		status = exitInterrupt
	}
	// A second signal while the processes wind down exits at once.
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "luarun: interrupted again: exiting now")
			os.Exit(exitInterrupt)
		case <-stopped:
		}
	}()
	shutdown(rt, grace, stderr)
	return status
}

// shutdown cancels every process and waits up to grace for them.
func shutdown(rt *luaproc.Runtime, grace time.Duration, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var se *scheduler.ShutdownError
	if err := rt.Shutdown(ctx); errors.As(err, &se) && grace > 0 {
		fmt.Fprintf(stderr, "luarun: %d processes did not stop within %v and were abandoned\n", len(se.Abandoned), grace)
	}
}

// reportFailure prints how the main process failed and returns the status.
func reportFailure(err error, stderr io.Writer) int {
	var se *luaproc.ScriptError
	var ee *luaproc.EntryError
	switch {
	case errors.As(err, &se):
		fmt.Fprintf(stderr, "luarun: %s\n", se.Message)
		if se.Traceback != "" {
			fmt.Fprintln(stderr, se.Traceback)
		}
	case errors.As(err, &ee):
		fmt.Fprintf(stderr, "luarun: %v\n", err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "luarun: %v\n", err)
	}
	return exitError
}

func permissions(sandbox bool, allow []string) ([]string, error) {
	var named []string
	for _, a := range allow {
		for _, m := range strings.Split(a, ",") {
			m = strings.TrimSpace(m)
			if m == "" {
				continue
			}
			if !slices.Contains(luaproc.Permissions, m) {
				return nil, fmt.Errorf("--allow %s: unknown module (choose from %s)", m, strings.Join(luaproc.Permissions, ", "))
			}
			named = append(named, m)
		}
	}
	if !sandbox {
		return luaproc.Permissions, nil
	}
	return named, nil
}

func newLogger(w io.Writer, level, format string) (*log.Logger, error) {
	lvl, err := log.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level %s: choose debug, info, warn or error", level)
	}
	formats := map[string]log.Formatter{"text": log.TextFormatter, "json": log.JSONFormatter, "logfmt": log.LogfmtFormatter}
	f, ok := formats[format]
	if !ok {
		return nil, fmt.Errorf("--log-format %s: choose text, json or logfmt", format)
	}
	return log.NewWithOptions(w, log.Options{Level: lvl, Formatter: f, ReportTimestamp: true}), nil
}

// load compiles the script at path, or standard input for "-".
func load(rt *luaproc.Runtime, path string, stdin io.Reader) (*luaproc.Script, error) {
	if path == "-" {
		src, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read script from stdin: %w", err)
		}
		return rt.LoadString("stdin", string(src))
	}
	return rt.LoadFile(path)
}

func printStats(w io.Writer, st luaproc.Stats) {
	fmt.Fprintf(w, "luarun: processes: %d started, %d failed, %d still live; %d scripts compiled\n", st.Submitted, st.Failed, st.LiveProcesses, st.ScriptsCompiled)
	fmt.Fprintf(w, "luarun: scheduler: %d steps; work from own deque %d, global queue %d, %d steals of %d processes; %d parks, %d wakeups\n",
		st.Steps, st.LocalPops, st.GlobalPops, st.Steals, st.Stolen, st.Parks, st.Wakeups)
	fmt.Fprintf(w, "luarun: dropped: %d messages to ended processes, %d late completions\n", st.DroppedMessages, st.DroppedCompletions)
}
