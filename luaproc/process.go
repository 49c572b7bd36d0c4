package luaproc

// A Lua process: one gopher-lua state and its coroutines, driven by the
// scheduler one Step at a time.
//
// # Tasks
//
// A process runs one or more tasks, each a coroutine of the process's
// state: the root task runs the script's chunk and then its entry point;
// process.all starts one task per function and suspends the calling task
// until all of them have finished. Step resumes the ready tasks one after
// another (never two at once: one state must never run on two goroutines)
// until every task waits for something outside the process.
//
// # Blocking calls
//
// A blocking Go function (time.sleep, process.receive, an application's
// command...) checks that it may yield (see frames.go), records its request
// in p.req and yields the marker cmdMarker. The yield travels out through
// any pcall or user coroutine (prelude.lua forwards it) to the Resume in
// run, which finds the request and turns it into a yield of the StepOutput
// with a fresh tag, or into a wait for a message. The tag maps back to the
// task, so completions may come back in any order; one whose tag is no
// longer awaited (a receive timer after the message won) is ignored.
//
// # Ending
//
// The process ends when its root task returns (its values are the result)
// or raises (a *ScriptError, or *EntryError), or when a cancel event
// arrives (Kill, Shutdown). A kill also cancels the context every coroutine
// of the process checks between instructions, so a busy loop stops too.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/commands"
	"github.com/luarun/luarun/payload"
	"github.com/luarun/luarun/scheduler"
)

// luaProcess is a Lua script running as a scheduler.Process. Runtime makes
// them; a Process is not used directly.
type luaProcess struct {
	rt     *Runtime
	script *Script
	// progDir is the program's directory: that of the script its first
	// process was started from (Runtime.Start), inherited by every process
	// it spawns; "" for a script that is not a file. Without fs,
	// process.spawn_file loads scripts only from inside it.
	progDir string
	entry   string
	input   payload.Payloads
	pid     scheduler.PID

	L   *lua.LState // the main state: globals; never run itself
	tpl *template   // the template the state was made from

	root *task
	// own: its context (own.ctx: lctx, and its scheduler context
	// ctx), p.root and their first slices (Init).
	own ownAllocs
	// pooled: the holder of the recycled state p took, for recycle to
	// put the state back in (pool.go); nil for a new state.
	pooled  *pooledState
	current *task   // the task being resumed
	ready   []*task // tasks to resume, in order
	nextTag uint64
	waiting []waiter // the tasks waiting for a completion, by tag (few: a slice)
	// dl: its receive and call timeouts (deadlines.go); nil until the
	// first, so that an idle process holds 8 bytes, not 72, for them.
	dl *deadlines
	// receivers wait in process.receive, first come first served.
	receivers []*task
	mailbox   mailbox

	// req is the request of the blocking call now yielding (set by park,
	// taken by run; reqAt, with the flags below, says where it is: a
	// static one is not copied).
	req request
	// out is the StepOutput of the running step (Send, Spawn).
	out *scheduler.StepOutput

	// pthreads: the coroutines pcall/xpcall run in now; freeThreads: the
	// finished ones kept for reuse (context.go).
	pthreads    map[*lua.LState]bool
	freeThreads []*lua.LState

	// lastFromV: the last sender's PID as a Lua value, so a stream of
	// messages from one sender does not box its PID each time.
	lastFromV lua.LValue

	// mods: the package table and the modules loading (require.go); nil
	// until the process first calls require or reads package.
	mods *modules

	// topLevel: the chunk of a process spawned from Lua is running: it
	// is module initialisation, and must not spawn (start).
	topLevel bool
	// entered: the chunk has run and the entry point is known (resolve);
	// before, the chunk runs, which must not start a supervisor
	entered bool
	// taking: a message is being converted for it, whole or not at all:
	// no charge is refused meanwhile (memory.go).
	taking bool
	// memBaseKB: what the last walk found it holding; memEndKB: the count
	// at which its state's grant runs out (memory.go). In KB, in 32 bits
	// each, so that they fill the padding beside the flags around them
	// (a luaProcess and its 8-byte malloc header must stay within the
	// 1,024-byte size class: TestIdleProcessFits).
	memBaseKB uint32

	// depth: resumes, pcalls and xpcalls nested on the Go stack now
	// (runaway.go).
	depth int32
	// atOnceLeft: how many more commands answered in their handler this
	// step may return without a yield (commandNow; maxAtOnce a step).
	atOnceLeft int32

	// trapping: it traps exits (read by Shutdown's goroutine:
	// TrapsShutdown).
	trapping atomic.Bool
	memEndKB uint32 // beside trapping, in its padding (memory.go)

	// procMore: what few processes use, nil until first used (more).
	// Its fields are promoted: code that may run before more was called
	// checks p.procMore != nil first.
	*procMore

	inMatch int8 // receive{match=} functions running (receive.go: notInMatch): 0 or 1
	// nestedSkips: plain receives left to wait without trying a nested
	// step first, after one that brought no reply; nestedMisses: such
	// nested steps in a row, which lengthen the wait (receive.go:
	// nestedReply).
	nestedSkips  uint8
	nestedMisses uint8
	// openedFiles: it made a handle of fs.open, so its end closes what
	// it left open (fsfile.go).
	openedFiles bool
	chunkRun    bool // the chunk is the program (no entry)
	reqAt       reqPlace
	done        bool // (the flags together: no padding after each)
	// preempted: a task of this step was preempted (preempt.go): the
	// step ends now, to continue later.
	preempted bool

	result payload.Payloads
	err    error
}

// procMore is the part of a process that few processes use: the calls
// it makes, its monitors and timers, the children it spawned, line
// readers, and how an error ended it. It is made on first use (more), so
// that a process that only sends and receives stays in a smaller size
// class (a luaProcess of 1,024 bytes, not 1,280).
type procMore struct {
	// stoppedAt: where the code was when a cancelled context stopped it
	// (checkInterrupt).
	stoppedAt string
	// forwarded: script coroutines suspended in a yield of the command
	// marker (a blocking call, a preemption) that the coroutine which
	// resumed them forwards out (prelude.lua's pass), by that coroutine:
	// only it may resume them, and they are "normal" to the others
	// (forward.go).
	forwarded map[*lua.LState]*lua.LState

	// callMons: its monitors of the processes it calls (calls.go);
	// monitors: its script's monitors, reference → target (relations.go);
	// timers: send_after's, by id.
	callMons     map[scheduler.PID]*callMonitor
	callsWaiting int // tasks blocked in a call
	// lastMon: the entry of callMons found last, and its key: a client
	// calling one server again and again finds it without the map
	// (callMonOf). Cleared with the entry (dropCallMon).
	lastMon   *callMonitor
	lastMonTo scheduler.PID
	// remoteCalls: its calls waiting on processes of other nodes, by
	// number (callSeq, the last one given); a reply finds its call here.
	remoteCalls map[uint64]*callRequest
	callSeq     uint64
	monitors    map[uint64]scheduler.PID
	timers      map[int64]*sendTimer
	timerID     int64
	timersKept  int

	// children: the processes this one spawned, so that process.wait works
	// on them after they ended.
	children childSet // children.go

	trace string // traceback of the last error raised in the root task
	// lineBufs: the lines read ahead for each handle's lines iterator
	// (fsfile.go).
	lineBufs   map[int64]*readAhead
	linesTaken int         // batches of lines taken since a lines iterator last yielded (fsfile.go)
	entryErr   *EntryError // set when the entry point did not resolve
	// main: the luarun command's main process's options (StartMain);
	// nil for any other (mainOpts).
	main *MainOptions

	// xpcall's handlers (debuglib.go; xpcall makes procMore): what one
	// made of its error, how many run where their error was raised, and
	// whether one of them tried to block.
	xpHandled xpcallResult
	xpRunning int32
	xpBlocked bool
}

// mainOpts is p's MainOptions, nil for a process not the luarun
// command's main one.
func (p *luaProcess) mainOpts() *MainOptions {
	if p.procMore == nil {
		return nil
	}
	return p.main
}

// more returns p's procMore, made on first use.
func (p *luaProcess) more() *procMore {
	if p.procMore == nil {
		p.procMore = &procMore{}
	}
	return p.procMore
}

// takeTrace returns the traceback of the root task's last error and
// forgets it.
func (p *luaProcess) takeTrace() string {
	if p.procMore == nil {
		return ""
	}
	tr := p.trace
	p.trace = ""
	return tr
}

// stoppedWhere is where a cancelled context stopped p's code, or "".
func (p *luaProcess) stoppedWhere() string {
	if p.procMore == nil {
		return ""
	}
	return p.stoppedAt
}

type task struct {
	co   *lua.LState
	fn   *lua.LFunction // the function of a task not yet started
	args []lua.LValue   // the values of its next resume

	// parent, index: a task of a process.all, the task waiting in it and
	// its position; all: what a task waiting in process.all waits for
	// (nil otherwise, so that a task is 200 bytes, not 280).
	parent *task
	index  int
	all    *allWait

	// waitingLoad: the module load it waits for in require (require.go).
	waitingLoad *moduleLoad

	// match, scanned: a selective receive's function and how many
	// entries from the mailbox's head it has refused (receive.go).
	match   *lua.LFunction
	scanned int
	// raise: an error to raise in the task when it resumes (its match
	// function failed while it waited), in blockedIn: the coroutine that
	// made its blocking call.
	raise     error
	blockedIn *lua.LState
	// call: the call it waits on (calls.go), nil if none.
	call *callRequest
	// wants: how many values the blocking call it is suspended in wants
	// back (-1: all of them). started: it was first resumed. hasDeadline:
	// it waits in a receive or call with a timeout (deadlines.go).
	wants       int32
	started     bool
	hasDeadline bool
	// argBuf backs args for the common resumes (a message, its sender,
	// its kind, a call's handle), and the values of its first resume.
	argBuf [4]lua.LValue
}

// allWait is a task's process.all while it waits: its children, their
// first results, the first (by position) error among them, and how many
// still run.
type allWait struct {
	children []*task
	results  []lua.LValue
	errValue lua.LValue
	errIndex int
	running  int
}

type waiter struct {
	tag uint64
	t   *task
}

// takeWaiter removes and returns the waiter for tag.
func (p *luaProcess) takeWaiter(tag uint64) (waiter, bool) {
	for i, w := range p.waiting {
		if w.tag == tag {
			last := len(p.waiting) - 1
			p.waiting[i] = p.waiting[last]
			p.waiting[last] = waiter{}
			p.waiting = p.waiting[:last]
			return w, true
		}
	}
	return waiter{}, false
}

type requestKind uint8

const (
	reqCommand requestKind = iota + 1
	reqReceive
	reqAll
	reqModule
	reqCall
	// reqAnswer: a command commandNow dispatched that its handler did not
	// answer at once; the task's waiter for it is registered.
	reqAnswer
)

// request is one blocking call. Its fields are few and packed (the name
// is a command's or a module's, scanned a 32-bit count beside kind), as
// every luaProcess holds one (TestIdleProcessFits).
type request struct {
	kind requestKind
	// yields: a reqCommand that yields even when its handler answers at
	// once (time.sleep(0): the other processes run before it returns; a
	// lines iterator past its batches a step: fsfile.go), where
	// commandNow would return at once.
	yields bool
	// scanned: reqReceive, the entries match has refused (a mailbox of
	// 2^31 messages would not fit in memory).
	scanned int32
	// name: reqCommand, the command; reqModule, the module another task
	// is loading.
	name    string
	args    []any
	timeout float64 // receive: seconds; < 0: none
	fns     []*lua.LFunction
	match   *lua.LFunction // reqReceive: a selective receive's function
}

// reqPlace says where the request of a blocking call is (luaProcess.reqAt).
type reqPlace uint8

const (
	reqNone           reqPlace = iota // no blocking call is yielding
	reqInP                            // in luaProcess.req
	reqReceiveForever                 // receiveForever
	reqAnswerAwaited                  // answerAwaited
	reqPreempt                        // no call: a preemption (preempt.go)
)

// takeRequest returns the request park recorded and forgets where it is.
func (p *luaProcess) takeRequest() *request {
	at := p.reqAt
	p.reqAt = reqNone
	switch at {
	case reqReceiveForever:
		return &receiveForever
	case reqAnswerAwaited:
		return &answerAwaited
	}
	return &p.req
}

// holdsPointers reports whether r refers to anything the collector
// would keep alive for it (clearing a request of 88 bytes costs its
// write barriers: a percent of a message hop).
func (r *request) holdsPointers() bool {
	return r.name != "" || r.args != nil || r.fns != nil || r.match != nil
}

// cmdMarker is the first value of every yield that carries a request.
var cmdMarker = &lua.LUserData{Value: "luarun.command", Metatable: lockedMT("luarun.command")}

// Init prepares the state and the root task. No Lua runs yet: the chunk
// and the entry point run in the first step, on a worker (a chunk may
// block, or loop; Init runs on the caller's goroutine). An entry point
// that does not exist therefore ends the process with an *EntryError.
func (p *luaProcess) Init(ctx context.Context, method string, input payload.Payloads) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("start %s: %v", p.script.name, v)
		}
	}()
	p.entry, p.input = method, input
	p.pid = scheduler.PIDFrom(ctx)
	p.own.ctx.initCtx(ctx, p)
	reused := p.rt.setupState(p)
	fn, chunk := p.tpl.boot, p.tpl.noChunk
	if _, run := p.globalsFor(p.tpl); run {
		chunk = p.L.NewFunctionFromProto(p.script.proto)
	}
	var args []lua.LValue
	if mo := p.mainOpts(); mo != nil && len(mo.Before) > 0 {
		fn, args = p.mainBoot(chunk, method) // mainproc.go
	} else {
		args = p.own.root.argBuf[:0] // free until the first resume has taken them
		args = append(args, chunk, p.script.entryValue(method))
		for _, v := range input {
			args = append(args, toLuaValue(p.L, v))
		}
	}
	p.root = p.initTask(&p.own.root, fn, args, reused)
	p.ready = append(p.own.ready[:0], p.root)
	return nil
}

// ownAllocs is what every process makes at its start, in the process's
// own allocation rather than one each: its context, root task and the
// first ready list. The root task's first arguments (the chunk, the
// entry's name and up to two arguments) are in its argBuf, which later
// resumes reuse.
type ownAllocs struct {
	ctx   luaCtx
	root  task
	ready [1]*task
}

// drop lets go of what the root task held (its coroutine, and through it
// the state; the chunk and arguments): a handle keeps an ended process,
// which must not keep its memory (Close). The context stays: commands
// still running may ask it.
func (o *ownAllocs) drop() {
	o.root, o.ready = task{}, [1]*task{}
}

// newTask makes a coroutine of p's state that checks p's context (or
// takes co, a recycled one).
func (p *luaProcess) newTask(fn *lua.LFunction, args []lua.LValue, co *lua.LState) *task {
	return p.initTask(&task{}, fn, args, co)
}

// initTask is newTask on t, a zero task.
func (p *luaProcess) initTask(t *task, fn *lua.LFunction, args []lua.LValue, co *lua.LState) *task {
	if co == nil {
		co, _ = p.L.NewThread() // p.L has no context: no child context is made
	}
	p.lctx().adopt(co)
	co.Tagged = true // a task's coroutine (isTask): scripts must not resume it
	t.co, t.fn, t.args = co, fn, args
	return t
}

// Step implements scheduler.Process.
// A Go panic that escapes it is recovered by the worker, which ends the
// process with StepPanicked's error (internal.go).
func (p *luaProcess) Step(events []scheduler.Event, out *scheduler.StepOutput) error {
	p.out = out
	p.atOnceLeft = maxAtOnce
	last := len(events) - 1
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case scheduler.EventCancel:
			if p.trapping.Load() && errors.Is(ev.Error, scheduler.ErrShutdown) {
				p.trappedShutdown()
			} else {
				p.end(nil, cancelError(ev.Error))
			}
		case scheduler.EventYieldComplete:
			p.completed(ev)
		default:
			p.intake(ev, i == last)
		}
	}
	for !p.done && !p.preempted {
		if len(p.receivers) > 0 && p.mailbox.len() > 0 { // its own test, without the call
			p.deliverMessages()
		}
		if len(p.ready) == 0 {
			break
		}
		p.run(p.nextReady())
	}
	out.Backlog = p.mailbox.sent // messages no receive has taken yet
	p.out = nil                  // the step's output is not the process's past the step
	switch {
	case p.done:
		out.Status, out.Result = scheduler.StatusDone, p.result
		return p.err
	case p.preempted:
		p.preempted = false
		out.Status = scheduler.StatusContinue
	case len(p.receivers) > 0 || p.procMore != nil && p.callsWaiting > 0:
		// a receive, or a call whose reply or down is a message
		out.Status = scheduler.StatusReceive
	default:
		out.Status = scheduler.StatusYield
	}
	return nil
}

// nextReady takes the first ready task (most steps have one: then
// without the copy's write barriers).
func (p *luaProcess) nextReady() *task {
	t := p.ready[0]
	if len(p.ready) == 1 {
		p.ready[0] = nil
		p.ready = p.ready[:0]
		return t
	}
	n := copy(p.ready, p.ready[1:])
	p.ready[n] = nil
	p.ready = p.ready[:n]
	return t
}

// Close implements scheduler.Process: it removes the process's monitors
// of others (as Erlang does when a watcher dies) and closes or recycles
// its state.
func (p *luaProcess) Close() {
	if p.L != nil {
		p.runFinalizers() // first: they run with the process's accounting and files
	}
	p.dropMonitors()
	p.stopTimers() // deadlines.go
	if p.rt.cluster != nil {
		p.rt.remoteEnds.dropWaiter(p.pid) // remotewait.go
	}
	p.endMemory()
	if p.openedFiles {
		p.rt.io.CloseFiles(p.pid)
	}
	if p.L != nil && !p.recycle() {
		p.L.Close()
	}
	p.L, p.root, p.ready, p.receivers = nil, nil, nil, nil
	p.own.drop()
}

// runFinalizers runs the __gc finalizers of the userdata left in p's
// state, as 5.1's lua_close does at a script's end (an error's included),
// before the state is closed or reused (lua/gc.go). A process killed, or
// ended by os.exit (whose 5.1 exits without closing the state), runs none.
func (p *luaProcess) runFinalizers() {
	if p.ctx().Err() != nil || p.err != nil && killedOrExited(p.err) {
		lua.DropFinalizers(p.L) // nor does L.Close
		return
	}
	lua.CloseFinalizers(p.L)
}

// killedOrExited reports whether err ends a process that was killed or
// called os.exit. Apart from runFinalizers, so that a process that
// returned does not pay for errors.As's targets escaping to the heap.
func killedOrExited(err error) bool {
	var exit *ExitError
	var killed *KilledError
	return errors.As(err, &exit) || errors.As(err, &killed)
}

func cancelError(reason error) error {
	if reason == nil {
		return &KilledError{}
	}
	return reason
}

// completed routes a command's result to the task that waits for it.
func (p *luaProcess) completed(ev *scheduler.Event) {
	if p.timerFired(ev.Tag) { // deadlines.go
		return
	}
	w, ok := p.takeWaiter(ev.Tag)
	if !ok {
		return
	}
	t := w.t
	t.args = p.answerValues(t, ev)
	p.ready = append(p.ready, t)
}

// answerValues are the values the command call of task t returns for
// its completion ev (a single value in t.argBuf: free, t's last resume's
// values are on its stack).
func (p *luaProcess) answerValues(t *task, ev *scheduler.Event) []lua.LValue {
	switch b, isLines := ev.Data.(commands.Lines); {
	case ev.Error != nil:
		return p.errorValues(ev.Error)
	case isLines: // a lines iterator's batch (fsfile.go)
		return []lua.LValue{p.firstLine(t, b)}
	default:
		return p.resultValues(ev.Data, t.argBuf[:0])
	}
}

// errorValues are what a failed command's Lua call returns: nil, the
// message, and what it did before failing if it says (exec.run's
// partial output). Apart from completed, so that a success does not pay
// for errors.As's target escaping to the heap.
func (p *luaProcess) errorValues(err error) []lua.LValue {
	var pe *commands.PartialError
	if errors.As(err, &pe) {
		return []lua.LValue{lua.LNil, lua.LString(err.Error()), toLuaValue(p.L, pe.Partial)}
	}
	return []lua.LValue{lua.LNil, lua.LString(err.Error())}
}

// resultValues turns a command's result into the values its Lua call
// returns: a payload.Payloads is several values, anything else one,
// each converted by payload.FromGo's table. A value with no Lua form
// makes the call return nil and the refusal (result2.rows[1].C:
// complex128 cannot be sent), as if the command had failed. One value
// is appended to buf (a waiting task's argBuf: a command's one result
// then costs no slice), several are a new slice.
func (p *luaProcess) resultValues(data any, buf []lua.LValue) []lua.LValue {
	switch x := data.(type) {
	case nil:
		return nil
	case payload.Payloads:
		vs, err := appValues(p.L, x)
		if err != nil {
			return []lua.LValue{lua.LNil, lua.LString(err.Error())}
		}
		return vs
	default:
		v, err := fromApp(p.L, x, "result")
		if err != nil {
			return []lua.LValue{lua.LNil, lua.LString(err.Error())}
		}
		return append(buf, v)
	}
}

// pidValue is pid as a Lua number.
func (p *luaProcess) pidValue(pid scheduler.PID) lua.LValue {
	// The PID as a number, not the PID, is compared: PIDs past 2^53
	// that round to one number have one value.
	if v, ok := p.lastFromV.(lua.LNumber); !ok || v != lua.LNumber(pid) {
		p.lastFromV = lua.LNumber(pid)
	}
	return p.lastFromV
}

func (p *luaProcess) removeReceiver(t *task) {
	for i, r := range p.receivers {
		if r == t {
			p.receivers = append(p.receivers[:i], p.receivers[i+1:]...)
			return
		}
	}
}

// run resumes t once and acts on how it stopped.
func (p *luaProcess) run(t *task) {
	if t.raise != nil { // its match function failed while it waited
		p.lctx().raiseAtNext(t.raise, t.blockedIn)
		t.raise = nil
	}
	p.current, p.reqAt = t, reqNone
	st, vals, err := p.resume(t)
	p.current = nil
	switch {
	case err != nil:
		p.taskEnded(t, nil, err)
	case st == lua.ResumeOK:
		p.taskEnded(t, vals, nil)
	case p.reqAt == reqReceiveForever && len(vals) > 0 && vals[0] == cmdMarker:
		// The usual block, a plain receive: request's case, inline.
		p.reqAt = reqNone
		t.match, t.scanned = nil, 0
		p.receivers = append(p.receivers, t)
	case p.reqAt == reqPreempt && len(vals) > 0 && vals[0] == cmdMarker:
		p.reqAt = reqNone
		p.ready = append(p.ready, t) // resumed with nothing, next step
		p.preempted = true
	case len(vals) > 0 && vals[0] == cmdMarker && p.reqAt != reqNone:
		r := p.takeRequest()
		p.request(t, r)
		if r == &p.req && r.holdsPointers() {
			p.req = request{} // not kept alive by p
		}
	default:
		p.taskEnded(t, nil, &ScriptError{Message: "attempt to yield from outside a coroutine"})
	}
}

// resume runs t until it yields, returns or fails. A Go panic inside
// gopher-lua or a Go function is not recovered here: it leaves the step,
// and the worker that recovers it ends the whole process with it
// (StepPanicked, internal.go), as it must for any task: process.all's
// included.
func (p *luaProcess) resume(t *task) (lua.ResumeState, []lua.LValue, error) {
	args := t.args
	t.args = nil
	if !t.started {
		t.started = true
		t.co.TakeMarkedYield() // a recycled coroutine's flag from its last process
		// Its results go to t.argBuf (free once the arguments are pushed):
		// no caller keeps them past this step (run, taskEnded).
		st, rerr, vals := p.L.ResumeAppend(t.argBuf[:0], t.co, t.fn, args...)
		t.fn = nil
		if marked := t.co.TakeMarkedYield(); rerr != nil {
			return lua.ResumeError, nil, p.scriptError(t, rerr)
		} else if marked && st == lua.ResumeYield {
			return st, yieldedMarker, nil // park's YieldMarked
		}
		return st, vals, nil
	}
	return p.resumeStarted(t, fitValues(args, int(t.wants)))
}

// resumeStarted resumes a suspended task as coroutine.resume does
// (lua.LState.ResumeSuspended, which takes args without moving them
// through the main state's stack), leaving the results on the main
// state's stack: a yield of the command marker, the common case, then
// costs no allocation (lua.LState.Resume copies the values out).
func (p *luaProcess) resumeStarted(t *task, args []lua.LValue) (lua.ResumeState, []lua.LValue, error) {
	L := p.L
	if L.GetTop() != 0 {
		L.SetTop(0)
	}
	n, marked := L.ResumeSuspendedFor(t.co, args, cmdMarker)
	if marked {
		return lua.ResumeYield, yieldedMarker, nil
	}
	top := L.GetTop()
	first := top - n + 1
	if b, ok := L.Get(first).(lua.LBool); !ok || !bool(b) {
		obj := unwhere(L.Get(first + 1))
		L.SetTop(0)
		return lua.ResumeError, nil, p.scriptError(t, &lua.ApiError{Type: lua.ApiErrorRun, Object: obj})
	}
	// t.argBuf is free: args were pushed onto t's stack, and no caller
	// keeps the values past this step (run, taskEnded), as resume's
	vals := t.argBuf[:0]
	for i := first + 1; i <= top; i++ {
		vals = append(vals, L.Get(i))
	}
	L.SetTop(0) // not deferred: a panic's resume clears the stack when it starts
	if t.co.Dead {
		return lua.ResumeOK, vals, nil
	}
	return lua.ResumeYield, vals, nil
}

// yieldedMarker stands for the values of a command-marker yield.
var yieldedMarker = []lua.LValue{cmdMarker}

// fitValues makes vs exactly n values, dropping extras and padding with
// nils (n < 0: as they are). gopher-lua does neither when it resumes a
// call that yielded from Go: missing values crash the VM, and extra ones
// leak into a following "return (f())".
func fitValues(vs []lua.LValue, n int) []lua.LValue {
	if n < 0 {
		return vs
	}
	if len(vs) > n {
		return vs[:n]
	}
	for len(vs) < n {
		vs = append(vs, lua.LNil)
	}
	return vs
}

// scriptError turns a failed resume into the process's error.
func (p *luaProcess) scriptError(t *task, rerr error) error {
	if p.ctx().Err() != nil {
		cause := context.Cause(p.ctx())
		if sle, ok := cause.(*scheduler.StepLimitError); ok {
			return p.stepLimitError(t, sle, rerr)
		}
		return cancelError(cause)
	}
	if t == p.root && p.procMore != nil && p.entryErr != nil {
		return p.entryErr
	}
	var obj lua.LValue = lua.LString(rerr.Error())
	var apiErr *lua.ApiError
	if errors.As(rerr, &apiErr) && apiErr.Object != nil {
		obj = apiErr.Object
	}
	overflowed := obj == lua.LString(callstackOverflow)
	if overflowed {
		obj = overflowError(t.co, obj)
	}
	se := &ScriptError{Message: p.errorMessage(obj), ValueType: luaTypeName(obj), entry: p.entryName()}
	if _, isString := obj.(lua.LString); !isString {
		se.Value, _ = toPayload(obj, "error")
	}
	if t == p.root {
		se.Traceback = p.takeTrace()
		if overflowed { // a Go panic: the traceback hook did not run
			se.Traceback = traceback(t.co, p.entryName())
		}
	}
	return se
}

// request turns t's blocking call into what it waits for.
func (p *luaProcess) request(t *task, r *request) {
	switch r.kind {
	case reqCommand: // one that yields (time.sleep, or past maxAtOnce: commandNow dispatches the others)
		tag := p.newTag()
		p.waiting = append(p.waiting, waiter{tag: tag, t: t})
		p.out.Yield(tag, r.name, r.args...)
	case reqReceive:
		t.match, t.scanned = r.match, int(r.scanned)
		p.receivers = append(p.receivers, t)
		if r.timeout > 0 {
			p.setDeadline(t, r.timeout)
		}
	case reqAll:
		t.all = &allWait{results: make([]lua.LValue, len(r.fns)), running: len(r.fns)}
		if len(r.fns) == 0 {
			p.allDone(t)
			return
		}
		t.all.children = make([]*task, len(r.fns))
		for i, fn := range r.fns {
			// see prelude.lua's trampoline
			c := p.newTask(p.tpl.trampoline, []lua.LValue{fn}, nil)
			c.parent, c.index = t, i
			t.all.children[i] = c
			p.ready = append(p.ready, c)
		}
	case reqModule:
		p.waitForLoad(t, r.name)
	case reqCall:
		p.waitForReply(t, r.timeout)
	}
}

func (p *luaProcess) newTag() uint64 {
	p.nextTag++
	return p.nextTag
}

// isTask reports whether th is the coroutine of one of the process's live
// tasks (the process's own code and process.all's functions).
func isTask(th *lua.LState) bool { return th.Tagged }

// taskEnded records how t ended: the process's end for the root task,
// one result of process.all for the others.
func (p *luaProcess) taskEnded(t *task, vals []lua.LValue, err error) {
	t.co.Tagged = false
	p.failTaskLoads(t)
	if t.parent == nil {
		if err != nil {
			p.end(nil, err)
			return
		}
		res, cerr := p.resultOf(vals)
		p.end(res, cerr)
		return
	}
	a := t.parent.all
	switch {
	case err != nil:
		if a.errValue == nil || t.index < a.errIndex {
			var se *ScriptError
			if errors.As(err, &se) {
				a.errValue = lua.LString(se.Message)
			} else {
				a.errValue = lua.LString(err.Error())
			}
			a.errIndex = t.index
		}
	case len(vals) > 0:
		a.results[t.index] = vals[0]
	default:
		a.results[t.index] = lua.LNil
	}
	a.running--
	if a.running == 0 {
		p.allDone(t.parent)
	}
}

// allDone resumes a task whose process.all has finished.
func (p *luaProcess) allDone(t *task) {
	if a := t.all; a.errValue != nil {
		t.args = []lua.LValue{lua.LFalse, a.errValue}
	} else {
		t.args = append([]lua.LValue{lua.LTrue}, a.results...)
	}
	t.all = nil
	p.ready = append(p.ready, t)
}

// resultOf converts the root task's return values into the result.
func (p *luaProcess) resultOf(vals []lua.LValue) (payload.Payloads, error) {
	if len(vals) == 1 && vals[0] == lua.LNil {
		vals = nil // gopher-lua reports "no values" as one nil
	}
	res, err := toPayloads(vals, resultPath)
	if err != nil {
		if p.chunkRun {
			return nil, nil // a chunk run as the program may return anything
		}
		return nil, fmt.Errorf("%s: %w", p.script.name, err)
	}
	return res, nil
}

// resultPath names result i in a conversion's error.
func resultPath(i int) string { return "result" + strconv.Itoa(i+1) }

func (p *luaProcess) end(res payload.Payloads, err error) {
	if p.done {
		return
	}
	p.done, p.result, p.err = true, res, err
	p.ready, p.receivers = nil, nil
}

// answerAwaited is the request of a task whose command commandNow
// dispatched, waiting for its answer.
var answerAwaited = request{kind: reqAnswer}

// maxAtOnce bounds the commands answered in their handler that one step
// returns without a yield; the next one yields as before commandNow
// existed. A command call was a point where the process's other tasks
// (process.all, calls) and the other processes ran; without the bound a
// task polling through such a command (while not done do app.poll()
// end) would keep the step for ever: its siblings never ran, and
// MaxStep killed a process that had never run long between calls.
// 256 keeps the yields a loop of them costs to one in 256.
const maxAtOnce = 256

// commandNow dispatches r's command from the blocking call itself
// (scheduler.StepOutput.Command), not after the task has yielded: a
// handler that answers before it returns — a Go function answering at
// once — has its answer pushed here as the call's results (n of them,
// answered true), without the yield, the step's end, the next step and
// the resume its answer would otherwise cost. Otherwise the task waits
// for the answer as for any command's, its waiter registered here. The
// call has passed blockable: where it could not block, it fails alike
// whether or not the handler would answer at once.
func (p *luaProcess) commandNow(L *lua.LState, r *request) (n int, answered bool) {
	t := p.current
	tag := p.newTag()
	ev, answered := p.out.Command(tag, r.name, r.args)
	if !answered {
		p.waiting = append(p.waiting, waiter{tag: tag, t: t})
		return 0, false
	}
	vals := p.answerValues(t, &ev) // into t.argBuf: t runs, its resume's values are on its stack
	if t.raise != nil {            // a failed batch of file:lines
		err := t.raise
		t.raise = nil
		L.RaiseError("%s", err.Error())
	}
	for _, v := range vals {
		L.Push(v)
	}
	return len(vals), true
}

// block is how a Go function makes a blocking call: it yields the
// request out of the process's coroutine. The function must return its
// result directly.
func (p *luaProcess) block(L *lua.LState, name string, r *request) int {
	return p.park(L, p.blockable(L, name), r)
}

// blockable raises the error of the blocking call name if it cannot
// block here; it returns the frame of the Go function making it.
func (p *luaProcess) blockable(L *lua.LState, name string) *callFrame {
	p.notInMatch(L, name)
	if p.current == nil {
		L.RaiseError("%s: cannot block outside a process step", name)
	}
	if p.procMore != nil && p.xpRunning > 0 { // xpcall runs the handler again once unwound (debuglib.go)
		p.xpBlocked = true
		L.RaiseError("%s: cannot block in an xpcall handler before the stack unwinds", name)
	}
	if inHook(L, p.current.co) {
		L.RaiseError("%s: cannot block inside a debug hook", name)
	}
	f := currentFrame(L)
	if !canYieldTo(L, p.current.co) {
		// A nested VM loop: a metamethod, an iterator, a function Go
		// called. The frames say which (the common case, a call of the
		// VM's, needs no walk of them).
		where := blockContext(L, f, p.current.co, p.tpl.sortFn)
		if where == "" { // a Go boundary the frames do not show
			where = "a Go function"
		}
		L.RaiseError("%s: cannot block inside %s", name, where)
	}
	return f
}

// park suspends the current task in the blocking call whose frame is f
// (blockable), with request r.
func (p *luaProcess) park(L *lua.LState, f *callFrame, r *request) int {
	if r.kind == reqCommand && !r.yields && p.atOnceLeft > 0 {
		if n, answered := p.commandNow(L, r); answered {
			p.atOnceLeft--
			return n
		}
		r = &answerAwaited
	}
	// The values the resume brings are fitted to what this call wants
	// (see fitValues); only a call made in the task's own coroutine is
	// resumed directly: the prelude forwards the others with a Lua resume,
	// which fits them itself.
	switch r {
	case &receiveForever: // static: not copied
		p.reqAt = reqReceiveForever
	case &answerAwaited:
		p.reqAt = reqAnswerAwaited
	default:
		p.req, p.reqAt = *r, reqInP // r is the caller's, most likely on its stack
	}
	p.current.blockedIn = L
	if L == p.current.co { // resumed by resumeStarted: no marker to move
		p.current.wants = int32(callerWants(f)) // argC of an instruction: 9 bits
		return L.YieldMarked()
	}
	p.current.wants = -1
	return L.Yield(cmdMarker)
}
