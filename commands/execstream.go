package commands

// exec.start: a command whose stdin and stdout are streams, for the Lua
// layer's handle (luaproc/builtin/exec.lua):
//
//	exec.start   (cmd, {args...} [, {dir=, env=, clear_env=}]) → a handle (a number)
//	exec:lines   (h)    → {lines...}, no_end: the next lines of stdout
//	                      (without their ends), at least one, as many as are
//	                      already there (up to about linesBatch bytes); {} at
//	                      the end; no_end: the last had no line end
//	exec:write   (h, s) → true (to the command's stdin)
//	exec:close   (h)    → true (closes its stdin: the command reads EOF)
//	exec:wait    (h)    → {code=, stdout= (what lines had not read), stderr=}
//	exec:kill    (h)    → true (SIGKILL to its process group)
//
// The child is started as exec.run starts one (its own process group,
// killed with it; the parent-death signal on Linux; recorded in
// procgroup), with the calling process's context: when the process ends
// or is killed, the child's group is killed, its pipes closed and the
// handle forgotten, wherever its calls are. A handle is usable only by
// the process that started it.
//
// stdin and stdout are OS pipes of our own (not Cmd's pipes, which Wait
// closes): stdout stays readable after the command exits, until what it
// wrote has been read. stderr is collected (capped like exec.run's) and
// returned by wait. Reads of stdout go one at a time (streamProc.readMu),
// as do writes to stdin (writeMu); neither holds a worker.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/procgroup"
	"github.com/luarun/luarun/scheduler"
)

// streamProc is one exec.start handle's command.
type streamProc struct {
	owner   scheduler.PID // never changes
	name    string        // the command, for messages
	cancel  context.CancelCauseFunc
	readMu  sync.Mutex    // one read of stdout at a time; guards stdout
	stdout  *bufio.Reader // over outR
	outR    *os.File
	writeMu sync.Mutex // one write to stdin at a time; guards inClosed
	stdin   *os.File
	// inClosed: close_stdin or wait closed stdin
	inClosed bool
	stderr   *cappedBuffer // written by Cmd's goroutine until exited
	exited   chan struct{} // closed once the command has been waited for
	waitErr  error         // Wait's error, once exited is closed
	state    *os.ProcessState
}

// streams are an IO's exec.start handles (under mu).
type streams struct {
	mu   sync.Mutex
	next int64
	byID map[int64]*streamProc
}

func (ss *streams) add(sp *streamProc) int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID = map[int64]*streamProc{}
	}
	ss.next++
	ss.byID[ss.next] = sp
	return ss.next
}

func (ss *streams) forget(id int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byID, id)
}

// Streams is how many exec.start handles are live.
func (o *IO) Streams() int {
	o.streams.mu.Lock()
	defer o.streams.mu.Unlock()
	return len(o.streams.byID)
}

// errFinished is the use of a handle after its wait, or by another
// process.
var errFinished = errors.New("attempt to use a finished command")

// stream reads args[0] as a handle of c's process.
func (o *IO) stream(c scheduler.Call) (int64, *streamProc, error) {
	id, ok := argInt(c.Args, 0)
	if !ok {
		return 0, nil, errors.New("argument 1: a command expected (from exec.start)")
	}
	o.streams.mu.Lock()
	sp := o.streams.byID[id]
	o.streams.mu.Unlock()
	if sp == nil || sp.owner != c.PID {
		return 0, nil, errFinished
	}
	return id, sp, nil
}

// execStart: exec.start(cmd, {args...} [, opts]) → a handle.
func (o *IO) execStart(c scheduler.Call) error {
	cmd, err := parseStart(c.Args)
	if err != nil {
		return err
	}
	cmd.maxOut = o.maxData
	o.startCall(c, func() {
		sp, err := o.startStream(c.Ctx, cmd)
		if err != nil {
			c.Fail(fmt.Errorf("exec.start %s: %w", cmd.name, err))
			return
		}
		sp.owner = c.PID
		id := o.streams.add(sp)
		// the process's end kills the command (its context) and drops the handle
		context.AfterFunc(c.Ctx, func() { o.endStream(id, sp) })
		c.Complete(id)
	})
	return nil
}

// parseStart reads exec.start's arguments: exec.run's (execRunOptions),
// without stdin or timeout: dir, env and clear_env.
func parseStart(args []any) (*command, error) {
	cmd, err := parseCommand(args)
	if err == nil && (cmd.stdin != "" || cmd.timeout != 0) {
		err = errors.New("argument 3: exec.start takes no stdin or timeout (write to it, or kill it)")
	}
	return cmd, err
}

// startStream starts cmd with pipes for stdin and stdout, under ctx, on
// an IO goroutine that then waits for it (run).
func (o *IO) startStream(ctx context.Context, cmd *command) (*streamProc, error) {
	if err := checkDir(cmd.dir); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	ec := exec.CommandContext(ctx, cmd.name, cmd.args...)
	ec.Dir, ec.Env = cmd.dir, cmd.env
	sp := &streamProc{name: cmd.name, cancel: cancel, outR: outR, stdin: inW, exited: make(chan struct{})}
	sp.stdout = bufio.NewReaderSize(outR, linesBatch)
	sp.stderr = &cappedBuffer{limit: cmd.maxOut, cancel: cancel}
	ec.Stdin, ec.Stdout, ec.Stderr = inR, outW, sp.stderr
	ec.WaitDelay = execWaitDelay
	killGroup(ec)
	started := make(chan error, 1)
	o.start(func() { sp.run(ec, inR, outW, started) })
	if err := <-started; err != nil {
		cancel(nil)
		outR.Close()
		inW.Close()
		return nil, startError(err)
	}
	return sp, nil
}

// run starts ec and waits for it, on one goroutine that keeps its thread
// (the parent-death signal's, exec_linux.go); then it kills what is left
// of the group and bounds how long stdout may stay open (a grandchild
// that escaped the group): reads that would wait past execWaitDelay
// from now see the end.
func (sp *streamProc) run(ec *exec.Cmd, inR, outW *os.File, started chan<- error) {
	release := holdThread()
	err := ec.Start()
	inR.Close() // the child has its own copies
	outW.Close()
	started <- err
	if err == nil {
		procgroup.Started(ec.Process) // luarun's exit kills it (and its group)
		err = ec.Wait()
		procgroup.Ended(ec.Process)
		endGroup(ec)
		sp.outR.SetReadDeadline(time.Now().Add(execWaitDelay))
	}
	release()
	sp.waitErr, sp.state = err, ec.ProcessState
	close(sp.exited)
}

// endStream is the end of the process that owns handle id: its command
// is killed (the process's context did that), its pipes closed, which
// ends a read or a write in flight, and the handle forgotten.
func (o *IO) endStream(id int64, sp *streamProc) {
	o.streams.forget(id)
	sp.cancel(context.Canceled)
	sp.outR.Close()
	sp.stdin.Close()
}

// execLines: exec:lines(h) → the next lines of stdout, {} at its end.
func (o *IO) execLines(c scheduler.Call) error {
	_, sp, err := o.stream(c)
	if err != nil {
		return err
	}
	o.startCall(c, func() {
		sp.readMu.Lock()
		defer sp.readMu.Unlock()
		lines, noEnd, err := sp.readLines(o.maxData)
		if err != nil {
			c.Fail(fmt.Errorf("exec.start %s: reading stdout: %w", sp.name, sysError(err)))
			return
		}
		c.Complete(payload.Payloads{lines, noEnd})
	})
	return nil
}

// readLines reads at least one line (waiting for it), then the lines
// already buffered, up to about linesBatch bytes; none at the end.
// noEnd: the last line had no line end (the last of stdout).
func (sp *streamProc) readLines(limit int64) (lines []any, noEnd bool, err error) {
	lines = []any{}
	for size := 0; size == 0 || size < linesBatch && lineBuffered(sp.stdout); {
		line, err := readLine(sp.stdout, limit)
		if errors.Is(err, os.ErrDeadlineExceeded) && size == 0 {
			err = nil // the command has ended; what holds stdout is not it
		}
		if err != nil || line == "" {
			return lines, false, err
		}
		size += len(line)
		trimmed := strings.TrimSuffix(line, "\n")
		lines = append(lines, trimmed)
		if len(trimmed) == len(line) {
			return lines, true, nil
		}
	}
	return lines, false, nil
}

// lineBuffered reports whether r holds a whole line already.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// execWrite: exec:write(h, s) → true, once the command's stdin took s.
func (o *IO) execWrite(c scheduler.Call) error {
	_, sp, err := o.stream(c)
	if err != nil {
		return err
	}
	s, err := argString(c.Args, 1)
	if err != nil {
		return err
	}
	o.startCall(c, func() {
		sp.writeMu.Lock()
		defer sp.writeMu.Unlock()
		if sp.inClosed {
			c.Fail(fmt.Errorf("exec.start %s: writing stdin: it is closed", sp.name))
			return
		}
		if _, err := io.WriteString(sp.stdin, s); err != nil {
			c.Fail(fmt.Errorf("exec.start %s: writing stdin: %w", sp.name, sysError(err)))
			return
		}
		c.Complete(true)
	})
	return nil
}

// execClose: exec:close(h) → true: the command's stdin is closed.
func (o *IO) execClose(c scheduler.Call) error {
	_, sp, err := o.stream(c)
	if err != nil {
		return err
	}
	o.startCall(c, func() {
		sp.closeStdin()
		c.Complete(true)
	})
	return nil
}

// closeStdin closes the command's stdin (after a write in flight).
func (sp *streamProc) closeStdin() {
	sp.writeMu.Lock()
	defer sp.writeMu.Unlock()
	if !sp.inClosed {
		sp.inClosed = true
		sp.stdin.Close()
	}
}

// execKill: exec:kill(h) → true: SIGKILL to the command's group.
func (o *IO) execKill(c scheduler.Call) error {
	_, sp, err := o.stream(c)
	if err != nil {
		return err
	}
	sp.cancel(errKilledStream)
	c.Complete(true)
	return nil
}

// errKilledStream is the cause of a command ended by exec:kill.
var errKilledStream = errors.New("killed")

// execWait: exec:wait(h) → {code=, stdout=, stderr=}: stdin is closed,
// the rest of stdout read, the command waited for; the handle is done.
func (o *IO) execWait(c scheduler.Call) error {
	id, sp, err := o.stream(c)
	if err != nil {
		return err
	}
	o.startCall(c, func() {
		sp.closeStdin()
		sp.readMu.Lock()
		rest, rerr := readCapped(c.Ctx, sp.stdout, 0, o.maxData, "output")
		sp.readMu.Unlock()
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			rerr = nil
		}
		if _, tooLarge := rerr.(tooLargeError); tooLarge {
			sp.cancel(rerr)
		}
		select {
		case <-sp.exited:
		case <-c.Ctx.Done():
			c.Fail(context.Cause(c.Ctx))
			return
		}
		o.streams.forget(id)
		sp.outR.Close()
		res, err := sp.result(rest, rerr)
		if err != nil {
			c.Fail(fmt.Errorf("exec.start %s: %w", sp.name, err))
			return
		}
		c.Complete(res)
	})
	return nil
}

// result is wait's answer once the command has been waited for.
func (sp *streamProc) result(rest []byte, readErr error) (map[string]any, error) {
	if readErr != nil {
		return nil, readErr
	}
	if err := exitError(sp.waitErr); err != nil {
		return nil, err
	}
	if sp.state == nil || !sp.state.Exited() {
		return nil, fmt.Errorf("terminated (%s)", sp.state)
	}
	return map[string]any{
		"code":   int64(sp.state.ExitCode()),
		"stdout": ownedString(rest),
		"stderr": ownedString(sp.stderr.buf.Bytes()),
	}, nil
}
