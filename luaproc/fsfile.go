package luaproc

// fs.open's handles and fs.lines: builtin/fs.lua over the file.*
// commands (commands/fsfile.go). A handle is a userdata only the runtime
// makes, holding the command layer's number for the open file; the
// process's files are closed when it ends (Close).

import (
	"errors"
	"fmt"

	lua "github.com/luarun/luarun/lua"

	"github.com/luarun/luarun/commands"
)

// fileHandle is a handle's number in the command layer.
type fileHandle int64

// loadFileHandles adds open and lines to the fs module table fsT and
// makes the handles' metatable.
func (tpl *template) loadFileHandles(L *lua.LState, fsT *lua.LTable) {
	L.Push(L.NewFunctionFromProto(builtinProto("fs")))
	L.Push(L.NewFunction(bind((*luaProcess).openFile)))
	for _, c := range []string{"file:read", "file:write", "file:seek", "file:close"} {
		L.Push(L.NewFunction(checkedCommandFunc(c)))
	}
	L.Push(L.NewFunction(bind((*luaProcess).wrapFile)))
	L.Push(L.NewFunction(tpl.fileID))
	L.Push(L.NewFunction(bind((*luaProcess).linesIterator)))
	L.Push(L.NewFunction(bind((*luaProcess).readAheadBytes)))
	L.Push(L.NewFunction(bind((*luaProcess).dropReadAhead)))
	L.Call(10, 3)
	methods := L.Get(-3).(*lua.LTable)
	fsT.RawSetString("open", L.Get(-2))
	fsT.RawSetString("lines", L.Get(-1))
	L.Pop(3)
	tpl.fileMT = L.CreateTable(0, 3)
	tpl.fileMT.RawSetString("__index", methods)
	tpl.fileMT.RawSetString("__metatable", lua.LString("locked"))
	tpl.fileMT.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(fmt.Sprintf("file (%d)", L.CheckUserData(1).Value.(fileHandle))))
		return 1
	}))
}

// openCommand is the fs.open command's function (a handle's number).
var openCommand = checkedCommandFunc("fs.open")

// openFile is the fs.open command: from the request on, the process has
// files to close at its end (an open that completes after it ended is
// closed by the command layer).
func (p *luaProcess) openFile(L *lua.LState) int {
	p.openedFiles = true
	return openCommand(L)
}

// wrapFile makes the handle of open file id.
func (p *luaProcess) wrapFile(L *lua.LState) int {
	L.Push(&lua.LUserData{Value: fileHandle(L.CheckInt64(1)), Metatable: p.tpl.fileMT})
	return 1
}

// fileID is a handle's number; anything else raises.
func (tpl *template) fileID(L *lua.LState) int {
	if ud, ok := L.Get(1).(*lua.LUserData); ok && ud.Metatable == tpl.fileMT {
		L.Push(lua.LNumber(ud.Value.(fileHandle)))
		return 1
	}
	L.ArgError(1, "a file expected (from fs.open)")
	return 0
}

// maxLinesTaken is how many prefetched batches of lines (~64 KB each) a
// lines iterator takes without a yield (counted in the process, so that
// Step has nothing to reset): the loop still yields every few batches,
// so that it stays a series of short steps (--max-step, the watchdog's
// warning, and the process's other tasks and messages see it as before).
const maxLinesTaken = 4

// readAhead are the lines a handle's iterator has read and not handed
// out yet.
type readAhead struct {
	lines []string
	noEnd bool // the last of them had no line end
}

// linesIterator is the iterator of handle id's lines (f:lines(), and
// fs.lines with close true: the file is closed at its end). Each call
// hands out a line read ahead, and only when there is none left blocks
// on file.lines, which reads the next batch: its first line is the call's
// value (firstLine), the rest wait in p.lineBufs. A batch the IO layer
// has prefetched is taken without blocking (IO.TakeLines).
func (p *luaProcess) linesIterator(L *lua.LState) int {
	id, closeAtEnd := L.CheckInt64(1), L.ToBool(2)
	args := []any{id, int64(0), closeAtEnd} // no read-ahead: this iterator has handed it all out
	var ra *readAhead                       // p.lineBufs[id] as last looked up (dropLines empties it)
	more := p.more()
	L.Push(L.NewFunction(func(L *lua.LState) int {
		if ra == nil || len(ra.lines) == 0 {
			ra = more.lineBufs[id]
		}
		if ra != nil && len(ra.lines) > 0 {
			L.Push(lua.LString(ra.lines[0]))
			ra.lines = ra.lines[1:]
			return 1
		}
		f := p.blockable(L, "file:lines") // wherever it could not block, it fails alike
		if more.linesTaken < maxLinesTaken {
			if b, ok := p.rt.io.TakeLines(p.pid, id); ok { // prefetched: no yield
				more.linesTaken++
				L.Push(p.keepLines(b))
				return 1
			}
		}
		more.linesTaken = 0 // this yield ends the step (yields: even if the handler answers at once)
		return p.park(L, f, &request{kind: reqCommand, yields: true, name: "file:lines", args: args})
	}))
	return 1
}

// firstLine keeps a batch of lines but its first for the handle's
// iterator and returns the first (nil at the end of the file); a failed
// batch is raised in the task, in the loop (a generic for would drop a
// second result).
func (p *luaProcess) firstLine(t *task, b commands.Lines) lua.LValue {
	if b.Err != "" {
		p.dropLines(b.Handle)
		t.raise = errors.New(b.Err)
		return lua.LNil
	}
	if len(b.Lines) == 0 {
		p.dropLines(b.Handle)
		return lua.LNil
	}
	return p.keepLines(b)
}

// keepLines keeps batch b (of at least one line) but its first line for
// the handle's iterator, and returns the first.
func (p *luaProcess) keepLines(b commands.Lines) lua.LValue {
	more := p.more()
	if more.lineBufs == nil {
		more.lineBufs = map[int64]*readAhead{}
	}
	p.dropLines(b.Handle)
	more.lineBufs[b.Handle] = &readAhead{lines: b.Lines[1:], noEnd: b.NoEnd}
	return lua.LString(b.Lines[0])
}

// dropLines forgets the lines read ahead for handle id, also in an
// iterator holding them.
func (p *luaProcess) dropLines(id int64) {
	if ra := p.readAheadOf(id); ra != nil {
		ra.lines = nil
		delete(p.lineBufs, id)
	}
}

// readAheadOf is the lines read ahead for handle id; nil if none.
func (p *luaProcess) readAheadOf(id int64) *readAhead {
	if p.procMore == nil {
		return nil
	}
	return p.lineBufs[id]
}

// readAheadBytes returns how many bytes of the file the lines handle
// id's iterator read ahead and did not hand out: the method about to read,
// write or seek passes it to its command, which seeks back over them
// first; once the command has run, builtin/fs.lua drops them
// (dropReadAhead). A method that raises before (bad arguments) leaves them
// to the loop.
func (p *luaProcess) readAheadBytes(L *lua.LState) int {
	id := L.CheckInt64(1)
	n := 0
	if ra := p.readAheadOf(id); ra != nil {
		for _, line := range ra.lines {
			n += len(line) + 1
		}
		if ra.noEnd && len(ra.lines) > 0 {
			n--
		}
	}
	L.Push(lua.LNumber(n))
	return 1
}

// dropReadAhead forgets what handle id's iterator read ahead (its
// command has sought back over it).
func (p *luaProcess) dropReadAhead(L *lua.LState) int {
	p.dropLines(L.CheckInt64(1))
	return 0
}

// loadExecStreams replaces the exec module table execT's start (the
// command, which answers a number) with builtin/exec.lua's, which
// answers a handle with lines, write, close_stdin, wait and kill.
func (tpl *template) loadExecStreams(L *lua.LState, execT *lua.LTable) {
	L.Push(L.NewFunctionFromProto(builtinProto("exec")))
	for _, c := range []string{"exec.start", "exec:lines", "exec:write", "exec:close", "exec:wait", "exec:kill"} {
		L.Push(L.NewFunction(checkedCommandFunc(c)))
	}
	L.Call(6, 1)
	execT.RawSetString("start", L.Get(-1))
	L.Pop(1)
}
