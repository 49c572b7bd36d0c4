package main

// The serving rows' luarun as users run it: the luarun command serving
// a script (the collector paced as the command paces it, gcpace.go), in
// a process of its own, its CPU time read from /proc. The in-process
// server (startServer) is an application embedding luarun, which keeps
// Go's own collector pace.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serveCmdLua is serveLua with a main for the command: it prints the
// address it serves on.
var serveCmdLua = serveLua[:strings.Index(serveLua, "function main(")] + `
function main(entry)
  if entry == "kv" then process.spawn("store") end
  local srv = assert(http.serve("127.0.0.1:0", entry))
  print(srv.addr)
  io.stdout:flush()
  process.receive()
end`

// serveCommand is the luarun command and its serving script, built once
// into dir (removed by close).
type serveCommand struct{ dir, bin, script string }

func newServeCommand() serveCommand {
	dir, bin := luarunDir("luarun-serve")
	return serveCommand{dir: dir, bin: bin, script: writeScript(dir, "serve.lua", serveCmdLua)}
}

func (sc serveCommand) close() { os.RemoveAll(sc.dir) }

// run serves entry with the command and loads path, with the command's
// CPU time per request.
func (sc serveCommand) run(entry string, dur time.Duration, path string, prepare func(addr string)) cpuLoad {
	cmd := exec.Command(sc.bin, sc.script, entry)
	out, err := cmd.StdoutPipe()
	check(err)
	var stderr bytes.Buffer // its drain's notice at SIGTERM; shown if it fails
	cmd.Stderr = &stderr
	check(cmd.Start())
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM) // drains, then exits
		cmd.Wait()
	}()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Wait()
		return cpuLoad{load: load{errText: fmt.Sprintf("luarun %s %s: no address (%v): %s", filepath.Base(sc.script), entry, err, stderr.String())}}
	}
	addr = strings.TrimSpace(addr)
	if prepare != nil {
		prepare(addr)
	}
	cpu0 := procCPU(cmd.Process.Pid)
	l := cpuLoad{load: runLoad("http://"+addr+path, dur)}
	if n := l.rps * dur.Seconds(); n > 0 && cpu0 >= 0 {
		l.cpu = time.Duration(float64(procCPU(cmd.Process.Pid)-cpu0) / n)
	}
	return l
}

// procCPU is process pid's CPU time (user and system) from
// /proc/pid/stat, in clock ticks of 10 ms; -1 if it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command's name
	if len(fields) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
