// Command luarun runs a Lua script as a process on luarun's work-stealing
// scheduler; the script spawns more processes, sends messages, sleeps and
// waits, and luarun exits when the main process ends.
//
//	luarun [flags] [-e stat] [-l name] [-v] script.lua [args...]
//	luarun check file.lua...
//
// The command line is a superset of lua5.1's (luacli.go): -e, -l, -v, -
// and --, LUA_INIT, and lua's arg table in the main process.
//
// Exit status: 0 the main process returned; 1 it raised an error, or an
// -e, -l or LUA_INIT failed; 2 a usage error or a script that cannot be
// loaded (missing file, syntax error, unknown entry point); 124 --timeout
// expired; 130 interrupted (SIGINT), 143 terminated (SIGTERM); os.exit(n): n.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/luarun/luarun/gcpace"
)

// version is set with -ldflags "-X main.version=v1.2.3"; otherwise it
// comes from the module's build information.
var version = ""

// Exit statuses.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitTimeout   = 124
	exitInterrupt = 130 // 128 + SIGINT, as a shell reports it
	exitTerm      = 143 // 128 + SIGTERM
)

func main() {
	gcpace.Start() // never stopped: the command's pace
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	status := exitOK
	cl := new(commandLine)
	app := newApp(stdin, stdout, stderr, &status, cl)
	parsed, err := parseCommandLine(args, append(app.Flags, cli.HelpFlag, cli.VersionFlag), commandNames(app)) // luacli.go
	if err != nil {
		fmt.Fprintf(stderr, "luarun: %v\n(run luarun --help for usage)\n", err)
		return exitUsage
	}
	*cl = *parsed
	if err := app.Run(append([]string{args[0]}, cl.flags...)); err != nil {
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			if msg := err.Error(); msg != "" {
				fmt.Fprintln(stderr, "luarun: "+msg)
			}
			return ec.ExitCode()
		}
		fmt.Fprintf(stderr, "luarun: %v\n(run luarun --help for usage)\n", err)
		return exitUsage
	}
	return status
}

// newApp is the command; its Action runs cl, the command line as
// parseCommandLine split it (urfave/cli parses luarun's flags only).
func newApp(stdin io.Reader, stdout, stderr io.Writer, status *int, cl *commandLine) *cli.App {
	return &cli.App{
		Name:      "luarun",
		Usage:     "run Lua scripts as lightweight processes",
		UsageText: "luarun [flags] [-e stat] [-l name] [-v] [--] script.lua [args...]\nluarun [flags] -e stat...\nluarun check file.lua...",
		Description: strings.TrimSpace(`
The script's main process runs entry point main (or --entry) with the
arguments as strings; without a main, the script's chunk is the program.
luarun exits when the main process ends; the others get a cancel and
--shutdown-timeout to finish.

As in lua5.1: -e stat runs the statement in the main process before the
script (without a script, the statements are the program), -l name
requires a module, -v prints the version line on stderr, - reads the
script from stdin, -- ends the options; LUA_INIT (a statement or @file)
runs first; arg holds the command line before the script at negative
indices.

Examples:
   luarun scripts/hello.lua
   luarun scripts/ring.lua 1000 100000      # 1,000 processes, 100,000 hops
   luarun -w 4 --stats scripts/workers.lua
   luarun --timeout 10s --entry worker job.lua input.txt
   luarun --sandbox --allow http crawl.lua
   echo 'print("hi")' | luarun -
   luarun -e 'package.path = "./lib/?.lua;" .. package.path' -l app main.lua
   luarun check scripts/*.lua`),
		Version:         buildVersion(),
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // run reports errors itself
		Flags:           runFlags(),
		Action: func(c *cli.Context) error {
			code, err := runScript(c, cl, stdin, stdout, stderr)
			*status = code
			return err
		},
		Commands: []*cli.Command{{
			Name:      "check",
			Usage:     "compile scripts without running them; report every syntax error as file:line: message",
			ArgsUsage: "file.lua...",
			Action: func(c *cli.Context) error {
				*status = check(c.Args().Slice(), stdout, stderr)
				return nil
			},
		}},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return cli.Exit(err.Error()+"\n(run luarun --help for usage)", exitUsage)
		},
	}
}

func runFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.IntFlag{Name: "workers", Aliases: []string{"w"}, Value: runtime.GOMAXPROCS(0), Usage: "scheduler workers"},
		&cli.StringFlag{Name: "entry", Usage: "entry point of the main process (default main, or the chunk)"},
		&cli.DurationFlag{Name: "timeout", Usage: "kill the main process after this long (exit status 124)"},
		&cli.DurationFlag{Name: "shutdown-timeout", Value: defaultGrace, Usage: "grace period for the other processes once the main one ended"},
		&cli.BoolFlag{Name: "sandbox", Usage: "remove os, io, fs, http and exec, and the listen and net permissions (http.serve, net)"},
		&cli.StringSliceFlag{Name: "allow", Usage: "with --sandbox, give back these modules and permissions (os,io,fs,http,exec,listen,net)"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text, json or logfmt"},
		&cli.BoolFlag{Name: "stats", Usage: "print scheduler statistics and process counts on exit"},
		&cli.DurationFlag{Name: "max-step", Usage: "kill a process that runs Lua this long without blocking (e.g. 2s; default: no limit, a warning after 1s)"},
		&cli.IntFlag{Name: "max-mailbox", Usage: "a send to a process with this many messages waiting returns nil, \"mailbox full\" (default: no limit)"},
		&cli.StringFlag{Name: "max-memory", Usage: "bound the runtime's memory (e.g. 2G, 512M; default: 3/4 of the machine's; 0: none): an allocation past it raises \"not enough memory\" in the process asking, and the process holding the most ends if the heap passes it"},
		&cli.StringFlag{Name: "max-process-memory", Usage: "bound each process's memory (e.g. 64M; default: none): an allocation past it raises \"not enough memory\" in that process"},
		&cli.IntFlag{Name: "max-procs", Value: 1 << 20, Usage: "process.spawn beyond this many live processes returns nil, err"},
		&cli.BoolFlag{Name: "quiet-crashes", Usage: "do not log processes that fail while nothing links, monitors or waits on them"},
	}, clusterFlags()...) // clusterflags.go
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
