package main

// The lua command's part of luarun's command line (lua.c of Lua 5.1):
//
//	luarun [luarun flags] [-e stat] [-l name] [-v] [--] [script [args...]]
//
// -e, -l and -v may come in any order, mixed with luarun's own flags,
// before the script; -e and -l also joined to their value (-lluacov). The
// first word that is not an option is the script ("-": standard input);
// "--" ends the options. The words before the script are the negative
// indices of arg, as lua.c makes them.

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/luarun/luarun/luaproc"
)

func init() {
	// -v is lua's (the version line on stderr, then on); --version stays
	// urfave/cli's (luarun version X on stdout, then exit).
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and exit (-v: lua's: print it and go on)", DisableDefaultText: true}
}

// luaOption is an -e or -l option, in command-line order.
type luaOption struct {
	require bool   // -l name: require(name); else -e stat
	value   string // the statement or the module name
}

// commandLine is luarun's command line split lua.c's way.
type commandLine struct {
	flags      []string    // luarun's own flags, with their values, for urfave/cli
	lua        []luaOption // -e and -l, in order
	version    bool        // -v
	script     string      // the script ("-": standard input); "" none
	scriptArgs []string    // its arguments: arg[1..n]
	before     []string    // the words before the script, the command's name first: arg[-n..-1]
	command    bool        // a subcommand (check, help): urfave/cli parses the whole line
}

// parseCommandLine splits args (os.Args: the command's name first). flags
// are luarun's own, commands its subcommands' names: a word that names one
// of luarun's flags is luarun's (-log-level is not -l og-level), an
// unknown one is left to urfave/cli to report.
func parseCommandLine(args []string, flags []cli.Flag, commands []string) (*commandLine, error) {
	cl := &commandLine{}
	takesValue := map[string]bool{}
	for _, f := range flags {
		tv, _ := f.(interface{ TakesValue() bool })
		for _, n := range f.Names() {
			takesValue[n] = tv != nil && tv.TakesValue()
		}
	}
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		tv, isFlag := takesValue[name]
		switch {
		case a == "--":
			i++
			if i < len(args) {
				cl.setScript(args, i)
			} else {
				cl.before = args
			}
			return cl, nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			if a != "-" && len(cl.lua) == 0 && !cl.version && contains(commands, a) {
				cl.command = true
				cl.flags = args[1:]
				return cl, nil
			}
			cl.setScript(args, i)
			return cl, nil
		case isFlag && strings.HasPrefix(a, "-"):
			cl.flags = append(cl.flags, a)
			if tv && !hasValue && i+1 < len(args) {
				i++
				cl.flags = append(cl.flags, args[i])
			}
		case a == "-v":
			cl.version = true
		case a == "-i":
			return nil, fmt.Errorf("-i: luarun has no interactive mode (run a script, - for standard input, or -e stat)")
		case strings.HasPrefix(a, "-e") || strings.HasPrefix(a, "-l"):
			v := a[2:]
			if v == "" {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("%s needs an argument (%s)", a, map[bool]string{true: "-l name", false: "-e stat"}[a == "-l"])
				}
				i++
				v = args[i]
			}
			cl.lua = append(cl.lua, luaOption{require: a[1] == 'l', value: v})
		default: // an unknown flag: urfave/cli reports it
			cl.flags = append(cl.flags, a)
		}
	}
	cl.before = args
	return cl, nil
}

func (cl *commandLine) setScript(args []string, i int) {
	cl.script, cl.scriptArgs, cl.before = args[i], args[i+1:], args[:i]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// commandNames are the names urfave/cli takes for app's subcommands,
// its help command's included.
func commandNames(app *cli.App) []string {
	names := []string{"help", "h"}
	for _, c := range app.Commands {
		names = append(names, c.Names()...)
	}
	return names
}

// versionLine is what -v prints (to standard error, as lua 5.1 does).
func versionLine() string {
	return "luarun " + buildVersion() + " (Lua 5.1)"
}

// beforeChunks compiles what the main process runs before its script, in
// lua.c's order: LUA_INIT (a statement, or @file), then the -e statements
// and -l modules in command-line order. An -e statement is the chunk
// "(command line)", as in lua; -l name is require(name).
func beforeChunks(rt *luaproc.Runtime, init string, opts []luaOption) ([]*luaproc.Script, error) {
	var chunks []*luaproc.Script
	if init != "" {
		var s *luaproc.Script
		var err error
		if path, ok := strings.CutPrefix(init, "@"); ok {
			s, err = rt.LoadFile(path)
		} else {
			s, err = rt.LoadString("LUA_INIT", init)
		}
		if err != nil {
			return nil, fmt.Errorf("LUA_INIT: %w", err)
		}
		chunks = append(chunks, s)
	}
	for _, o := range opts {
		src := o.value
		if o.require {
			src = "require(" + luaQuote(o.value) + ")"
		}
		s, err := rt.LoadString("=(command line)", src)
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, s)
	}
	return chunks, nil
}

// luaQuote is s as a Lua string literal.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/+", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// loadMain compiles the main process's script and what runs before it;
// s is nil when there is no script (-e alone). A failure is printed
// here: status 2 for the script, as luarun's, and 1 for LUA_INIT, -e and
// -l, as lua's.
func loadMain(rt *luaproc.Runtime, cl *commandLine, stdin io.Reader, stderr io.Writer) (s *luaproc.Script, mo luaproc.MainOptions, status int) {
	before, err := beforeChunks(rt, os.Getenv("LUA_INIT"), cl.lua)
	if err != nil {
		fmt.Fprintf(stderr, "luarun: %v\n", err)
		return nil, mo, exitError
	}
	mo = luaproc.MainOptions{Before: before, Arg0: cl.script, ArgBefore: cl.before}
	if cl.script == "" {
		return nil, mo, exitOK
	}
	s, err = load(rt, cl.script, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "luarun: %v\n", err)
		return nil, mo, exitUsage
	}
	return s, mo, exitOK
}
