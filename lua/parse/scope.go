package parse

// scope.go: the local variables and upvalues Lua 5.1's single-pass parser
// knows at each point of a chunk, followed by the grammar's actions as the
// parser reads it, so that 5.1's limits are raised while parsing, at the
// token where 5.1 raises them (luarun). 5.1 checks them as it reads: more
// than 200 active locals in a function (LUAI_MAXVARS, counting the ones
// the statement being read declares) or 60 upvalues (LUAI_MAXUPVALUES) is
// "main function has more than 200 local variables" / "function at line N
// has more than 60 upvalues", even when the chunk has a syntax error
// further on. The compiler, which sees a chunk only once it is parsed,
// checks the same limits again for an AST that comes from elsewhere.
//
// Invariants: names holds the locals of every open function, outermost
// function first; a function's are names[base:], the first active-base of
// them active (visible to a name), the rest declared by the statement
// being read and not active yet (5.1's new_localvar before
// adjustlocalvars). Blocks nest inside functions: a block's mark is
// len(names) when it opened, and no local is pending then. Within one
// function, a name that is not its own local always means the same outer
// variable (the enclosing functions' scopes do not change while it is
// read), so upvalues are told apart by name, as the compiler does.

import (
	"fmt"

	"github.com/luarun/luarun/lua/ast"
)

// Lua 5.1's LUAI_MAXVARS and LUAI_MAXUPVALUES.
const (
	maxLocalVars = 200
	maxUpvalues  = 60
)

// Names of the locals 5.1 declares that no name can refer to (a for
// loop's control variables), and arg, the local a vararg function has in
// 5.1 (LUA_COMPAT_VARARG).
var (
	numForLocals = [3]string{"(for index)", "(for limit)", "(for step)"}
	genForLocals = [3]string{"(for generator)", "(for state)", "(for control)"}
)

type scopes struct {
	names  []string
	funcs  []funcScope
	blocks []int
	// the next function opened is a function statement's: defined on the
	// line of its 'function' (defLine, 0 for none) and a method when its
	// name has a ':' (its first local is self)
	defLine int
	method  bool
}

// funcScope is an open function.
type funcScope struct {
	base, active int
	line         int // 5.1's linedefined: 0 for the main chunk
	upvals       []string
}

// init opens the main chunk.
func (s *scopes) init() {
	s.funcs = append(s.funcs[:0], funcScope{})
}

func (s *scopes) top() *funcScope { return &s.funcs[len(s.funcs)-1] }

// openFunc opens a function whose parameter list begins with the '('
// at line open: defined there, as 5.1's body() takes it for a function
// expression and a local function, or on the line of the 'function' of a
// function statement.
func (lx *Lexer) openFunc(open int) {
	s := &lx.scopes
	f := funcScope{base: len(s.names), active: len(s.names), line: open}
	if s.defLine > 0 {
		f.line = s.defLine
	}
	if n := len(s.funcs); n < cap(s.funcs) { // reuse a closed one's upvalue list
		f.upvals = s.funcs[:n+1][n].upvals[:0]
	}
	s.funcs = append(s.funcs, f)
	if s.method {
		s.names = append(s.names, "self")
		s.top().active++
	}
	s.defLine, s.method = 0, false
}

// funcStatement says the next function opened is a function statement's,
// whose 'function' was the last one read.
func (lx *Lexer) funcStatement(method bool) {
	lx.scopes.defLine = lx.funcLine
	lx.scopes.method = method
}

// closeFunc closes the innermost function.
func (lx *Lexer) closeFunc() {
	s := &lx.scopes
	s.names = s.names[:s.top().base]
	s.funcs = s.funcs[:len(s.funcs)-1]
}

// enterBlock opens a block in the innermost function.
func (lx *Lexer) enterBlock() {
	lx.scopes.blocks = append(lx.scopes.blocks, len(lx.scopes.names))
}

// leaveBlock closes the innermost block: its locals go out of scope.
func (lx *Lexer) leaveBlock() {
	s := &lx.scopes
	mark := s.blocks[len(s.blocks)-1]
	s.blocks = s.blocks[:len(s.blocks)-1]
	s.names = s.names[:mark]
	s.top().active = mark
}

// declare declares a local of the innermost function, not active yet;
// char is the parser's lookahead (for the line of an error).
func (lx *Lexer) declare(name string, char int) {
	s := &lx.scopes
	f := s.top()
	if len(s.names)-f.base+1 > maxLocalVars {
		lx.limitError(f, maxLocalVars, "local variables", char)
	}
	s.names = append(s.names, name)
}

// declareFor declares a for loop's three control variables and its first
// name, opening the block the loop's locals live in.
func (lx *Lexer) declareFor(hidden *[3]string, name string, char int) {
	lx.enterBlock()
	for _, h := range hidden {
		lx.declare(h, char)
	}
	lx.declare(name, char)
}

// activate makes the locals declared so far active.
func (lx *Lexer) activate() {
	lx.scopes.top().active = len(lx.scopes.names)
}

// resolve looks a variable's name up as 5.1's singlevar: a local of the
// innermost function, or of an enclosing one, which makes it an upvalue
// of each function in between, or else a global.
func (lx *Lexer) resolve(name string, char int) {
	lx.upvalue(len(lx.scopes.funcs)-1, name, char)
}

// upvalue reports whether name is a local or an upvalue of the function
// at level (not a global), registering the upvalues it takes.
func (lx *Lexer) upvalue(level int, name string, char int) bool {
	if level < 0 {
		return false
	}
	s := &lx.scopes
	f := &s.funcs[level]
	for i := f.active - 1; i >= f.base; i-- {
		if s.names[i] == name {
			return true
		}
	}
	for _, u := range f.upvals {
		if u == name {
			return true
		}
	}
	if !lx.upvalue(level-1, name, char) {
		return false
	}
	if len(f.upvals)+1 > maxUpvalues {
		lx.limitError(f, maxUpvalues, "upvalues", char)
	}
	f.upvals = append(f.upvals, name)
	return true
}

// limitError raises 5.1's errorlimit for function f: its message with no
// token, on the line 5.1's lexer is on, the end of the token after the
// last one read (char < 0: not read yet, so read here; a lexical error in
// it is raised instead, as 5.1, which has read it, would).
func (lx *Lexer) limitError(f *funcScope, limit int, what string, char int) {
	msg := ""
	if f.line == 0 {
		msg = fmt.Sprintf("main function has more than %d %s", limit, what)
	} else {
		msg = fmt.Sprintf("function at line %d has more than %d %s", f.line, limit, what)
	}
	if char < 0 {
		if _, err := lx.scanner.Scan(lx); err != nil {
			panic(err)
		}
	}
	line := lx.scanner.line(lx.scanner.Pos)
	panic(&Error{Pos: ast.Position{Source: lx.scanner.Pos.Source, Line: line}, Message: msg, Line: line})
}
