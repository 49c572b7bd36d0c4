package luaproc

// fs.open's handles and fs.lines: builtin/fs.lua over the file.*
// commands (commands/fsfile.go). A handle is a userdata only the runtime
// makes, holding the command layer's number for the open file; the
// process's files are closed when it ends (Close).

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// fileHandle is a handle's number in the command layer.
type fileHandle int64

// loadFileHandles adds open and lines to the fs module table fsT and
// makes the handles' metatable.
func (tpl *template) loadFileHandles(L *lua.LState, fsT *lua.LTable) {
	L.Push(L.NewFunctionFromProto(builtinProto("fs")))
	L.Push(L.NewFunction(checkedCommandFunc("file.open")))
	for _, c := range []string{"file.read", "file.lines", "file.write", "file.seek", "file.close"} {
		L.Push(L.NewFunction(commandFunc(c)))
	}
	L.Push(L.NewFunction(bind((*luaProcess).wrapFile)))
	L.Push(L.NewFunction(tpl.fileID))
	L.Call(8, 3)
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

// wrapFile makes the handle of open file id, and marks the process as
// one that has files to close at its end.
func (p *luaProcess) wrapFile(L *lua.LState) int {
	p.openedFiles = true
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
