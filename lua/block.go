package lua

// Blocking calls that a kill must end: os.execute waiting for its
// command, and reads of io.popen's pipe or of standard input. (luarun's
// fork.)
//
// The VM checks its interrupt between instructions and long Go
// functions Tick (interrupt.go), but a goroutine blocked in a system
// call checks nothing: a killed process blocked in os.execute("sleep
// 100") would stay until the command ends, and luarun's shutdown with it.
// So such a call blocks on another goroutine, and the state's goroutine
// waits for it (await) while checking the interrupt every millisecond;
// when the interrupt raises, the call is stopped first (its command's
// process group killed, which also ends a read of its pipe), then the
// error goes on. A state with neither interrupt nor context (plain
// gopher-lua) blocks as it did.
//
// Commands run in a process group of their own (procgroup), so that the
// kill reaches what they started (a shell's pipeline, `cmd &`); except
// os.execute's when standard input is a terminal: a command in a
// background group stops (SIGTTIN, SIGTTOU) when it reads the terminal or
// sets its modes (`stty -echo`), and Ctrl-C reaches luarun's own group,
// the command included, anyway.

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/luarun/luarun/procgroup"
)

// awaitPoll is how often await checks the interrupt.
const awaitPoll = time.Millisecond

// interruptible reports whether ls checks an interrupt or a context.
func (ls *LState) interruptible() bool { return ls.interrupt != nil || ls.ctx != nil }

// await waits until done is closed, checking ls's interrupt; if it
// raises, stop (if not nil) is called first, and must make done close
// soon or be abandoned.
func (ls *LState) await(done <-chan struct{}, stop func()) {
	if !ls.interruptible() {
		<-done
		return
	}
	tick := time.NewTicker(awaitPoll)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if err := ls.interruptError(); err != nil {
				if stop != nil {
					stop()
				}
				ls.RaiseError("%s", err.Error())
			}
		}
	}
}

// waitCommand waits for p, a command os.execute started (and recorded
// with procgroup), as await does; a kill kills its process group.
func (ls *LState) waitCommand(p *os.Process) (*os.ProcessState, error) {
	var ps *os.ProcessState
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ps, err = p.Wait()
		procgroup.Ended(p)
	}()
	ls.await(done, func() { procgroup.Kill(p) })
	return ps, err
}

// waitPopen waits for cmd, an io.popen command, as await does; a kill
// kills its process group.
func (ls *LState) waitPopen(cmd *exec.Cmd) error {
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = cmd.Wait()
		procgroup.Ended(cmd.Process)
	}()
	ls.await(done, func() { procgroup.Kill(cmd.Process) })
	return err
}

// executeAttr is the attributes of os.execute's command: a process group
// of its own, unless standard input is a terminal (see above).
func executeAttr() *syscall.SysProcAttr {
	if isatty.IsTerminal(os.Stdin.Fd()) {
		return nil
	}
	return procgroup.Attr(nil)
}

// blockingReader is the reader under the buffer of a file whose reads
// can block for ever (a popen'd command's output, standard input): each
// read runs on a goroutine of its own, and the reading state (file.caller)
// awaits it. A read an interrupt left running is kept (pending) and its
// bytes handed to the next read, so none is lost.
type blockingReader struct {
	r       io.Reader
	file    *lFile
	stop    func() // stops what r waits on (the command's group), or nil
	pending *pendingRead
	rest    []byte // what a read got beyond what its taker wanted
	restErr error  // and its error, handed out after rest
}

type pendingRead struct {
	done chan struct{}
	buf  []byte
	err  error
}

func (br *blockingReader) Read(p []byte) (int, error) {
	if len(br.rest) > 0 || br.restErr != nil {
		return br.takeRest(p)
	}
	L := br.file.caller
	if br.pending == nil {
		if L == nil || !L.interruptible() {
			return br.r.Read(p)
		}
		pr := &pendingRead{done: make(chan struct{}), buf: make([]byte, len(p))}
		go func() {
			defer close(pr.done)
			var n int
			n, pr.err = br.r.Read(pr.buf)
			pr.buf = pr.buf[:n]
		}()
		br.pending = pr
	}
	if L != nil {
		L.await(br.pending.done, br.stop)
	} else {
		<-br.pending.done
	}
	pr := br.pending
	br.pending = nil
	br.rest, br.restErr = pr.buf, pr.err
	return br.takeRest(p)
}

// takeRest hands out what a read got, then its error.
func (br *blockingReader) takeRest(p []byte) (int, error) {
	n := copy(p, br.rest)
	br.rest = br.rest[n:]
	if len(br.rest) > 0 {
		return n, nil
	}
	err := br.restErr
	br.restErr = nil
	return n, err
}
