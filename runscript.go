package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/log"
	"github.com/urfave/cli/v2"

	"github.com/luarun/luarun/luaproc"
	"github.com/luarun/luarun/procgroup"
	"github.com/luarun/luarun/scheduler"
)

const defaultGrace = 5 * time.Second

// runScript runs the main process and returns the exit status. An error
// it returns is a usage error, printed by run.
func runScript(c *cli.Context, cl *commandLine, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if cl.version {
		fmt.Fprintln(stderr, versionLine())
	}
	hasExec := slices.ContainsFunc(cl.lua, func(o luaOption) bool { return !o.require })
	switch {
	case cl.script != "" || hasExec:
	case cl.version && (len(cl.lua) == 0 && os.Getenv("LUA_INIT") == ""):
		return exitOK, nil // -v alone
	case !cl.version:
		return exitUsage, cli.Exit("no script given\n(usage: luarun [flags] [-e stat] [-l name] script.lua [args...]; luarun --help)", exitUsage)
	}
	allow, err := permissions(c.Bool("sandbox"), c.StringSlice("allow"))
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	logger, err := newLogger(stderr, c.String("log-level"), c.String("log-format"))
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	opts, err := runtimeOptions(c)
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	node, leave, err := joinCluster(c, os.Getenv, logger) // clusterflags.go
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	defer leave()    // after the runtime's shutdown, which every return below has done
	if node != nil { // a nil *cluster.Node would make a non-nil ClusterNode
		opts.Cluster = node
	}
	exited := make(chan int, 1) // os.exit's status
	opts.Allow, opts.Logger, opts.Stdout = allow, logger, stdout
	opts.Exit = func(code int) { exited <- code }
	rt, err := luaproc.New(opts)
	if err != nil {
		return exitUsage, cli.Exit(err, exitUsage)
	}
	script, mo, code := loadMain(rt, cl, stdin, stderr) // luacli.go
	if code != exitOK {
		shutdown(rt, 0, stderr)
		return code, nil
	}
	var args []any
	for _, a := range cl.scriptArgs {
		args = append(args, a)
	}
	// Signals are caught before the script starts: one that came while it
	// ran but before wait would kill luarun outright (exit by signal, no
	// shutdown, no 130).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	h, err := rt.StartMain(context.Background(), script, c.String("entry"), mo, args...)
	if err != nil {
		shutdown(rt, 0, stderr)
		return exitError, cli.Exit(err, exitError)
	}

	status, osExit := wait(rt, h, exited, sigs, c.Duration("timeout"), c.Duration("shutdown-timeout"), stderr)
	if c.Bool("stats") {
		printStats(stderr, rt.Stats(), rt.SchedulerStats())
		if node != nil {
			printClusterStats(stderr, rt.Stats().MessagesForwarded, node.Stats())
		}
	}
	if status != exitOK || osExit {
		return status, nil
	}
	if _, err := h.Result(); err != nil {
		return reportFailure(err, stderr), nil
	}
	return exitOK, nil
}

// runtimeOptions reads the runtime's flags and environment.
func runtimeOptions(c *cli.Context) (luaproc.Options, error) {
	w := c.Int("workers")
	if w < 1 || w > scheduler.MaxWorkers {
		return luaproc.Options{}, fmt.Errorf("--workers %d: choose 1 to %d", w, scheduler.MaxWorkers)
	}
	for _, name := range []string{"max-mailbox", "max-procs"} {
		if c.Int(name) < 0 {
			return luaproc.Options{}, fmt.Errorf("--%s must not be negative (0: the default)", name)
		}
	}
	if c.Duration("max-step") < 0 {
		return luaproc.Options{}, errors.New("--max-step must not be negative (0: no limit)")
	}
	maxMem, err := sizeFlag(c, "max-memory", 0)
	if err != nil {
		return luaproc.Options{}, err
	}
	maxProcMem, err := sizeFlag(c, "max-process-memory", 0)
	if err != nil {
		return luaproc.Options{}, err
	}
	if c.IsSet("max-memory") && maxMem == 0 {
		maxMem = -1 // --max-memory 0: no bound
	}
	return luaproc.Options{
		MaxMemory:        maxMem,
		MaxProcessMemory: maxProcMem,
		Workers:          w,
		LuaPath:          os.Getenv("LUA_PATH"),
		MaxStep:          c.Duration("max-step"),
		MaxMailbox:       c.Int("max-mailbox"),
		MaxProcs:         c.Int("max-procs"),
		QuietCrashes:     c.Bool("quiet-crashes"),
	}, nil
}

// wait waits for the main process, an os.exit, a --timeout or a signal
// (on sigs),
// then shuts the runtime down with the grace period. It returns 124 for a
// timeout, 130 or 143 for SIGINT or SIGTERM, os.exit's status (osExit
// true), else 0 (the main process's own result decides).
func wait(rt *luaproc.Runtime, h luaproc.Handle, exited <-chan int, sigs <-chan os.Signal, timeout, grace time.Duration, stderr io.Writer) (status int, osExit bool) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	status = exitOK
	select {
	case <-h.Done():
		select { // the main process's own os.exit ended it
		case status = <-exited:
			osExit = true
		default:
		}
	case status = <-exited:
		osExit = true
	case <-expired:
		fmt.Fprintf(stderr, "luarun: timeout: the main process ran longer than %v\n", timeout)
		rt.Kill(h.PID(), "timeout")
		status = exitTimeout
	case sig := <-sigs:
		fmt.Fprintf(stderr, "luarun: %v: stopping every process (up to %v; again to exit now)\n", sig, grace)
		status = signalStatus(sig)
	}
	// A second signal while the processes wind down exits at once.
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintln(stderr, "luarun: interrupted again: exiting now")
			procgroup.KillAll()
			os.Exit(signalStatus(sig))
		case <-stopped:
		}
	}()
	shutdown(rt, grace, stderr)
	return status, osExit
}

// shutdown cancels every process and waits up to grace for them: a hard
// limit. The runtime abandons what has not stopped a little before it
// (shutdownMargin), and if even that does not return in time (a process
// stuck in a Go call the interrupt cannot reach), shutdown returns
// anyway and luarun exits. Either way the commands the processes
// started (os.execute, io.popen, exec.run) are killed with their
// process groups. The channel it returns gets the runtime's Shutdown
// result when that returns, even after shutdown itself has given up on
// it (the tests wait on it; luarun exits instead).
func shutdown(rt *luaproc.Runtime, grace time.Duration, stderr io.Writer) <-chan error {
	defer procgroup.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), grace-shutdownMargin(grace))
	defer cancel()
	done, finished := make(chan error, 1), make(chan error, 1)
	go func() {
		err := rt.Shutdown(ctx)
		done <- err
		finished <- err
	}()
	hard := time.NewTimer(max(grace, minHardLimit))
	defer hard.Stop()
	select {
	case err := <-done:
		var se *scheduler.ShutdownError
		if errors.As(err, &se) && grace > 0 {
			fmt.Fprintf(stderr, "luarun: %d processes did not stop within %v and were abandoned\n", len(se.Abandoned), grace)
		}
	case <-hard.C:
		fmt.Fprintf(stderr, "luarun: the processes did not stop within %v: exiting without them\n", grace)
	}
	return finished
}

// minHardLimit is shutdown's hard limit for a grace of (about) zero:
// time for the runtime to abandon its processes.
const minHardLimit = 100 * time.Millisecond

// shutdownMargin is how long before the hard limit the runtime abandons
// its processes: a tenth of the grace, at most 250 ms.
func shutdownMargin(grace time.Duration) time.Duration {
	return min(grace/10, 250*time.Millisecond)
}

// signalStatus is the exit status for a signal: 128 + its number, as a
// shell reports a command the signal ended (SIGINT 130, SIGTERM 143).
func signalStatus(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return exitTerm
	}
	return exitInterrupt
}

// reportFailure prints how the main process failed and returns the status.
func reportFailure(err error, stderr io.Writer) int {
	var se *luaproc.ScriptError
	var ee *luaproc.EntryError
	switch {
	case errors.As(err, &se) && se.ValueType == "nil":
		// lua.c prints nothing for error() or error(nil)
	case errors.As(err, &se) && se.ValueType != "" && se.ValueType != "string" && se.ValueType != "number":
		// nor a traceback, and no __tostring, for an error value that is
		// not a string (lua.c's report)
		fmt.Fprintln(stderr, "luarun: (error object is not a string)")
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
			if !slices.Contains(luaproc.Permissions(), m) {
				return nil, fmt.Errorf("--allow %s: unknown module (choose from %s)", m, strings.Join(luaproc.Permissions(), ", "))
			}
			named = append(named, m)
		}
	}
	if !sandbox {
		return luaproc.Permissions(), nil
	}
	return named, nil
}

// newLogger is the luarun command's logger: charmbracelet/log's, in the
// format and from the level the flags name, as the handler of the
// *slog.Logger the runtime takes (Options.Logger).
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	lvl, err := log.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level %s: choose debug, info, warn or error", level)
	}
	formats := map[string]log.Formatter{"text": log.TextFormatter, "json": log.JSONFormatter, "logfmt": log.LogfmtFormatter}
	f, ok := formats[format]
	if !ok {
		return nil, fmt.Errorf("--log-format %s: choose text, json or logfmt", format)
	}
	opts := log.Options{Level: lvl, Formatter: f, ReportTimestamp: true}
	if format != "text" { // for tools: RFC 3339, milliseconds and zone
		opts.TimeFormat = rfc3339Millis
	}
	return slog.New(log.NewWithOptions(w, opts)), nil
}

// rfc3339Millis is the time of JSON and logfmt log lines:
// 2026-11-25T13:50:39.123Z, or with the zone's offset (+01:00).
const rfc3339Millis = "2006-01-02T15:04:05.000Z07:00"

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

func printStats(w io.Writer, st luaproc.Stats, ss scheduler.Stats) {
	fmt.Fprintf(w, "luarun: processes: %d started: %d returned, %d failed, %d killed, %d cancelled at exit, %d abandoned, %d still live; %d refused (--max-procs)\n",
		st.Started, st.Returned, st.Failed, st.Killed, st.Cancelled, st.Abandoned, st.Live, st.Refused)
	fmt.Fprintf(w, "luarun: steps: %d ran over 1 s, %d killed by --max-step; %d scripts compiled\n", st.SlowSteps, st.StepLimited, st.ScriptsCompiled)
	fmt.Fprintf(w, "luarun: scheduler: %d steps; work from own deque %d, global queue %d, %d steals of %d processes; %d parks, %d wakeups\n",
		ss.Steps, ss.LocalPops, ss.GlobalPops, ss.Steals, ss.Stolen, ss.Parks, ss.Wakeups)
	fmt.Fprintf(w, "luarun: scheduler: %d extra workers started for busy ones\n", ss.Helpers)
	fmt.Fprintf(w, "luarun: messages: %d never received (left when their process ended), %d refused (--max-mailbox); %d late completions dropped\n",
		st.MessagesDropped, st.MessagesRefused, st.CompletionsDropped)
}

// sizeFlag reads flag name as a size: bytes, or a number with K, M, G or
// T (powers of 1024, an optional trailing B or iB); def when it is not
// set.
func sizeFlag(c *cli.Context, name string, def int64) (int64, error) {
	if !c.IsSet(name) {
		return def, nil
	}
	n, err := parseSize(c.String(name))
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", name, err)
	}
	return n, nil
}

// parseSize reads "512M", "2G", "1.5GiB", "65536".
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := 1.0
	if k := len(t); k > 0 {
		if i := strings.IndexByte("KMGT", t[k-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:k-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || f < 0 || math.IsInf(f*mult, 0) || f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with K, M, G or T)", s)
	}
	return int64(f * mult), nil
}
