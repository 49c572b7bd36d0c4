package luaproc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	lua "github.com/luarun/luarun/lua"
	"github.com/luarun/luarun/lua/parse"
)

// Script is a Lua program compiled once; any number of processes run it.
// It is immutable and safe to share.
type Script struct {
	name  string // the path it was loaded from, or the name it was given
	dir   string // the directory of a file script (for spawn_file), or ""
	real  string // a file's resolved path, once a Runtime loaded it (files.go)
	proto *lua.FunctionProto

	// entries: the entry points, sorted, once the chunk has run to its
	// end in some process (resolve); nil until then. Written once.
	entries atomic.Pointer[[]string]
	// entryNames: the entry points processes were started at (the first
	// maxEntryNames of them), as the Lua values Init passes the boot
	// function (entryValue); copied on write, nil until the first start.
	entryNames atomic.Pointer[[]entryName]
	// globals: what its processes' globals are a view of, under the
	// template they were made for (scriptglobals.go); nil until the
	// first start
	globals atomic.Pointer[scriptGlobals]
}

// maxEntryNames bounds Script.entryNames: a script's entry points are
// few, but the names a start asks for need not be (they come from Lua).
const maxEntryNames = 8

// entryName is an entry point's name and its Lua value.
type entryName struct {
	name  string
	value lua.LValue
}

// entryValue is name as a Lua string: made once for each of the first
// few entries processes of s were started at (a server started by main
// starts its handler's entry at every request), so that a start does
// not box the name again.
func (s *Script) entryValue(name string) lua.LValue {
	for {
		old := s.entryNames.Load()
		var names []entryName
		if old != nil {
			names = *old
		}
		for _, e := range names {
			if e.name == name {
				return e.value
			}
		}
		v := lua.LValue(lua.LString(name))
		if len(names) >= maxEntryNames {
			return v
		}
		grown := append(names[:len(names):len(names)], entryName{name: name, value: v})
		if s.entryNames.CompareAndSwap(old, &grown) {
			return v
		}
	}
}

// Name returns the script's file path or given name.
func (s *Script) Name() string { return s.name }

// SyntaxError is a script that does not compile. Error reads
// "file:line: message", the way Lua reports it.
type SyntaxError struct {
	File    string
	Line    int // 0 when unknown
	Message string
}

func (e *SyntaxError) Error() string {
	file := lua.PositionSource(e.File) // "=(command line)" as lua writes it
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", file, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", file, e.Message)
}

// Compile compiles src under name (used in error messages and tracebacks).
// A UTF-8 byte order mark at the start is skipped (as Lua 5.2 does;
// Windows editors write one), and a first line starting with "#" is
// ignored, as lua does, so scripts can be executable.
//
// A binary chunk (its first byte "\27", after a "#" line if any: what
// string.dump makes) is loaded as lua5.1 loads one; its functions keep
// the chunk name and lines they were compiled with.
func Compile(name, src string) (*Script, error) {
	src = strings.TrimPrefix(src, "\xef\xbb\xbf")
	if s, ok, err := undumpScript(name, src); ok {
		return s, err
	}
	if strings.HasPrefix(src, "#") {
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			src = "--" + src[i:] // keep the line count
		} else {
			src = ""
		}
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, syntaxError(name, err)
	}
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, &SyntaxError{File: name, Message: err.Error()}
	}
	noArgTable(proto)
	if !strings.HasPrefix(name, "=") { // "=name" is a chunk's name, not a file's
		markFileChunk(proto)
	}
	return &Script{name: name, proto: proto}, nil
}

// markFileChunk flags p and every function nested in it as a script's
// (lua.FunctionProto.FileChunk): debug.getinfo tells them apart from the
// chunks a script builds with load or loadstring as Lua 5.1 does (a
// file's source is "@name", a loaded chunk's is its chunk name), where
// gopher-lua keeps one SourceName for both. The mark lives and dies with
// the script's protos.
func markFileChunk(p *lua.FunctionProto) {
	p.FileChunk = true
	for _, c := range p.FunctionPrototypes {
		markFileChunk(c)
	}
}

// undumpScript loads src if it is a binary chunk (ok), after a "#" line
// if it has one.
func undumpScript(name, src string) (s *Script, ok bool, err error) {
	if strings.HasPrefix(src, "#") {
		if i := strings.IndexByte(src, '\n'); i >= 0 && lua.IsBinaryChunk([]byte(src[i+1:])) {
			src = src[i+1:]
		}
	}
	if !lua.IsBinaryChunk([]byte(src)) {
		return nil, false, nil
	}
	proto, err := lua.Undump([]byte(src), "@"+name)
	if err != nil {
		var ue *lua.UndumpError
		if errors.As(err, &ue) {
			return nil, true, &SyntaxError{File: name, Message: ue.Msg + " in precompiled chunk"}
		}
		return nil, true, &SyntaxError{File: name, Message: err.Error()}
	}
	return &Script{name: name, proto: proto}, true, nil
}

// noArgTable stops gopher-lua from making an "arg" table each time the
// chunk proto runs. It keeps Lua 5.0's implicit arg of vararg functions
// (CompatVarArg) and flags every chunk, which is vararg, as needing one;
// but a chunk declares no local arg, so the table (with gopher-lua's
// default hash part, ~5 KB) is garbage the moment it is made, once per
// process for a script and once per require for a module.
func noArgTable(chunk *lua.FunctionProto) {
	chunk.IsVarArg &^= lua.VarArgNeedsArg
}

// CompileFile reads and compiles the file at path.
func CompileFile(path string) (*Script, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read script: %w", err)
	}
	s, err := Compile(path, string(src))
	if err != nil {
		return nil, err
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

// syntaxError turns the parser's error into file:line: message, as Lua
// 5.1 reports it.
func syntaxError(name string, err error) error {
	var pe *parse.Error
	if errors.As(err, &pe) {
		return &SyntaxError{File: name, Line: pe.Line, Message: pe.Reason()}
	}
	return &SyntaxError{File: name, Message: strings.TrimSpace(err.Error())}
}
