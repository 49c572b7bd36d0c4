package parse

// syntax51.go: Lua 5.1's syntax errors (luarun). The goyacc parser tells
// that a chunk has one, not which one 5.1 reports: an LALR parser fails
// in a state (often after default reductions) that says little about
// what 5.1's recursive descent was checking. So when it fails, the
// source is read again by a recognizer of 5.1's parser, lparser.c's
// functions without code generation, which stops at the first error
// with 5.1's message: what it expected ("'=' expected", "'end' expected
// (to close 'function' at line 3)", "unexpected symbol", ...), and the
// errors 5.1's parser raises besides ("no loop to break", "cannot use
// '...' outside a vararg function", "ambiguous syntax ...", "syntax
// error" for an expression that is no statement). It shares the
// scanner, so a lexical error is the same; its limits (locals, upvalues,
// nesting) are the goyacc parser's, which raises them as it reads.
//
// Invariants: the recognizer accepts what 5.1 accepts, and the goyacc
// grammar the same language, so on a chunk the grammar rejects the
// recognizer fails at the same token or before (at a 5.1 error the
// grammar leaves to the compiler); should it accept the chunk, the
// grammar's error stands. Lines are 5.1's: linenumber is the scanner's
// line after the last token read (a lookahead included), lastLine the
// one before the current token was read.

import (
	"fmt"
	"io"

	"github.com/luarun/luarun/lua/ast"
)

// syntaxError51 reads the chunk in src again as Lua 5.1's parser does
// and returns its first error, or failed when it finds none (or fails
// itself: a parser's error, not a crash, is what Parse returns).
func syntaxError51(src io.Reader, name string, failed *Error) (err *Error) {
	c := &checker{sc: NewScanner(src, name), fs: &funcState51{vararg: true}}
	defer func() {
		if e := recover(); e != nil {
			err = failed
			if pe, ok := e.(*Error); ok {
				err = pe
			}
		}
	}()
	c.next()
	c.chunk()
	c.check(EOF)
	return failed
}

// checker is the state of 5.1's parser the recognizer needs (LexState).
type checker struct {
	sc       *Scanner
	t        ast.Token // the current token
	ahead    ast.Token // the lookahead token, when hasAhead
	hasAhead bool
	lastLine int
	fs       *funcState51
}

// funcState51 is an open function: whether it has a '...' and the loops
// open in it.
type funcState51 struct {
	vararg bool
	loops  int
}

// exprKind is what 5.1's expdesc tells of a primary expression: a
// variable may be assigned, a call may be a statement.
type exprKind int

const (
	kOther exprKind = iota
	kVar
	kCall
)

func (c *checker) scan() ast.Token {
	tok, err := c.sc.Scan()
	if err != nil {
		panic(err)
	}
	return tok
}

// next is luaX_next.
func (c *checker) next() {
	c.lastLine = c.sc.Line()
	if c.hasAhead {
		c.t, c.hasAhead = c.ahead, false
		return
	}
	c.t = c.scan()
}

// lookahead is luaX_lookahead.
func (c *checker) lookahead() {
	c.ahead, c.hasAhead = c.scan(), true
}

// errorf is luaX_syntaxerror: the message near the current token.
func (c *checker) errorf(format string, args ...interface{}) {
	panic(&Error{Pos: c.t.Pos, Message: fmt.Sprintf(format, args...), Token: tokenText(c.t), Line: c.sc.Line()})
}

func (c *checker) testNext(tok int) bool {
	if c.t.Type == tok {
		c.next()
		return true
	}
	return false
}

func (c *checker) check(tok int) {
	if c.t.Type != tok {
		c.errorf("'%s' expected", token2str(tok))
	}
}

func (c *checker) checkNext(tok int) {
	c.check(tok)
	c.next()
}

// checkMatch expects what, which closes who opened at line where.
func (c *checker) checkMatch(what, who, where int) {
	if c.testNext(what) {
		return
	}
	if where == c.sc.Line() {
		c.errorf("'%s' expected", token2str(what))
	}
	c.errorf("'%s' expected (to close '%s' at line %d)", token2str(what), token2str(who), where)
}

// token2str is luaX_token2str: how a message names a kind of token.
func token2str(tok int) string {
	switch tok {
	case EOF:
		return "<eof>"
	case TIdent:
		return "<name>"
	}
	if tok >= 0 && tok < 256 {
		return string([]byte{byte(tok)})
	}
	for word, t := range reservedWords {
		if t == tok {
			return word
		}
	}
	return TokenName(tok)
}

func (c *checker) blockFollow() bool {
	switch c.t.Type {
	case TElse, TElseIf, TEnd, TUntil, EOF:
		return true
	}
	return false
}

func (c *checker) chunk() {
	for last := false; !last && !c.blockFollow(); {
		last = c.statement()
		c.testNext(';')
	}
}

// statement reads one, and reports whether it must be the block's last.
func (c *checker) statement() bool {
	line := c.sc.Line()
	switch c.t.Type {
	case TIf:
		c.ifStat(line)
	case TWhile:
		c.next()
		c.expr()
		c.loopBody(func() { c.checkNext(TDo); c.chunk() })
		c.checkMatch(TEnd, TWhile, line)
	case TDo:
		c.next()
		c.chunk()
		c.checkMatch(TEnd, TDo, line)
	case TFor:
		c.forStat(line)
	case TRepeat:
		c.next()
		c.loopBody(func() { c.chunk(); c.checkMatch(TUntil, TRepeat, line); c.expr() })
	case TFunction:
		c.next()
		c.funcName()
		c.body(line)
	case TLocal:
		c.next()
		if c.testNext(TFunction) {
			c.checkName()
			c.body(c.sc.Line())
		} else {
			c.localStat()
		}
	case TReturn:
		c.next()
		if !c.blockFollow() && c.t.Type != ';' {
			c.exprList()
		}
		return true
	case TBreak:
		c.next()
		if c.fs.loops == 0 {
			c.errorf("no loop to break")
		}
		return true
	default:
		c.exprStat()
	}
	return false
}

func (c *checker) loopBody(read func()) {
	c.fs.loops++
	read()
	c.fs.loops--
}

func (c *checker) ifStat(line int) {
	c.testThenBlock()
	for c.t.Type == TElseIf {
		c.testThenBlock()
	}
	if c.testNext(TElse) {
		c.chunk()
	}
	c.checkMatch(TEnd, TIf, line)
}

func (c *checker) testThenBlock() {
	c.next()
	c.expr()
	c.checkNext(TThen)
	c.chunk()
}

func (c *checker) forStat(line int) {
	c.next()
	c.checkName()
	switch c.t.Type {
	case '=':
		c.next()
		c.expr()
		c.checkNext(',')
		c.expr()
		if c.testNext(',') {
			c.expr()
		}
	case ',', TIn:
		for c.testNext(',') {
			c.checkName()
		}
		c.checkNext(TIn)
		c.exprList()
	default:
		c.errorf("'=' or 'in' expected")
	}
	c.loopBody(func() { c.checkNext(TDo); c.chunk() })
	c.checkMatch(TEnd, TFor, line)
}

func (c *checker) checkName() { c.checkNext(TIdent) }

func (c *checker) funcName() {
	c.checkName()
	for c.t.Type == '.' {
		c.next()
		c.checkName()
	}
	if c.t.Type == ':' {
		c.next()
		c.checkName()
	}
}

// body reads a function's parameters and block; line is its linedefined.
func (c *checker) body(line int) {
	outer := c.fs
	c.fs = &funcState51{}
	c.checkNext('(')
	c.parList()
	c.checkNext(')')
	c.chunk()
	c.checkMatch(TEnd, TFunction, line)
	c.fs = outer
}

func (c *checker) parList() {
	if c.t.Type == ')' {
		return
	}
	for {
		switch c.t.Type {
		case TIdent:
			c.next()
		case T3Comma:
			c.next()
			c.fs.vararg = true
		default:
			c.errorf("<name> or '...' expected")
		}
		if c.fs.vararg || !c.testNext(',') {
			return
		}
	}
}

func (c *checker) localStat() {
	c.checkName()
	for c.testNext(',') {
		c.checkName()
	}
	if c.testNext('=') {
		c.exprList()
	}
}

func (c *checker) exprStat() {
	if k := c.primaryExp(); k != kCall {
		c.assignment(k)
	}
}

func (c *checker) assignment(k exprKind) {
	if k != kVar {
		c.errorf("syntax error")
	}
	if c.testNext(',') {
		c.assignment(c.primaryExp())
		return
	}
	c.checkNext('=')
	c.exprList()
}

func (c *checker) primaryExp() exprKind {
	k := kVar
	switch c.t.Type {
	case '(':
		line := c.sc.Line()
		c.next()
		c.expr()
		c.checkMatch(')', '(', line)
		k = kOther
	case TIdent:
		c.next()
	default:
		c.errorf("unexpected symbol")
	}
	for {
		switch c.t.Type {
		case '.':
			c.next()
			c.checkName()
			k = kVar
		case '[':
			c.next()
			c.expr()
			c.checkNext(']')
			k = kVar
		case ':':
			c.next()
			c.checkName()
			c.funcArgs()
			k = kCall
		case '(', TString, '{':
			c.funcArgs()
			k = kCall
		default:
			return k
		}
	}
}

func (c *checker) funcArgs() {
	line := c.sc.Line()
	switch c.t.Type {
	case '(':
		if line != c.lastLine {
			c.errorf("ambiguous syntax (function call x new statement)")
		}
		c.next()
		if c.t.Type != ')' {
			c.exprList()
		}
		c.checkMatch(')', '(', line)
	case '{':
		c.constructor()
	case TString:
		c.next()
	default:
		c.errorf("function arguments expected")
	}
}

func (c *checker) exprList() {
	c.expr()
	for c.testNext(',') {
		c.expr()
	}
}

// expr is 5.1's subexpr without priorities, which decide the tree, not
// which tokens are read.
func (c *checker) expr() {
	for {
		for c.t.Type == TNot || c.t.Type == '-' || c.t.Type == '#' {
			c.next()
		}
		c.simpleExp()
		if !isBinaryOp(c.t.Type) {
			return
		}
		c.next()
	}
}

func isBinaryOp(tok int) bool {
	switch tok {
	case '+', '-', '*', '/', '%', '^', T2Comma, TNeq, TEqeq, '<', TLte, '>', TGte, TAnd, TOr:
		return true
	}
	return false
}

func (c *checker) simpleExp() {
	switch c.t.Type {
	case TNumber, TString, TNil, TTrue, TFalse:
		c.next()
	case T3Comma:
		if !c.fs.vararg {
			c.errorf("cannot use '...' outside a vararg function")
		}
		c.next()
	case '{':
		c.constructor()
	case TFunction:
		c.next()
		c.body(c.sc.Line())
	default:
		c.primaryExp()
	}
}

func (c *checker) constructor() {
	line := c.sc.Line()
	c.checkNext('{')
	for c.t.Type != '}' {
		c.field()
		if !c.testNext(',') && !c.testNext(';') {
			break
		}
	}
	c.checkMatch('}', '{', line)
}

// field is a constructor's: name = expr, [expr] = expr or expr.
func (c *checker) field() {
	switch c.t.Type {
	case TIdent:
		if c.lookahead(); c.ahead.Type != '=' {
			c.expr()
			return
		}
		c.next()
	case '[':
		c.next()
		c.expr()
		c.checkNext(']')
	default:
		c.expr()
		return
	}
	c.checkNext('=')
	c.expr()
}
