package main

import (
	"fmt"
	"io"

	"github.com/luarun/luarun/luaproc"
)

// check compiles each file and prints every error; it returns 0 when all
// compile, 2 otherwise (as for a script that cannot be loaded).
func check(files []string, stdout, stderr io.Writer) int {
	if len(files) == 0 {
		fmt.Fprintln(stderr, "luarun: check: no files given (usage: luarun check file.lua...)")
		return exitUsage
	}
	status := exitOK
	for _, f := range files {
		if _, err := luaproc.CompileFile(f); err != nil {
			fmt.Fprintln(stderr, err)
			status = exitUsage
		}
	}
	if status == exitOK {
		fmt.Fprintf(stdout, "%d files ok\n", len(files))
	}
	return status
}
