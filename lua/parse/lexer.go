package parse

// lexer.go: the scanner, Lua 5.1's llex.c (luarun: gopher-lua's differed
// in what it accepted and in its messages), and the Lexer goyacc's parser
// reads tokens from.
//
// The scanner reads a token as 5.1's does and fails where 5.1's fails,
// with 5.1's message and the token text 5.1 quotes (txtToken): a string
// as far as it was read, its quote included; a malformed number as
// written; '<eof>' at the end. Its line, Scanner.Line, is 5.1's
// linenumber: the line the end of the last token read is on (before a
// newline that ends a string, which 5.1 has not read yet). A character
// that starts no token is a token of its own, which no rule of the
// grammar takes ("unexpected symbol near '@'").

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/luarun/luarun/lua/ast"
)

const EOF = -1

// whitespace is C's isspace in the C locale, what 5.1's lexer skips.
const whitespace uint64 = 1<<'\t' | 1<<'\n' | 1<<'\v' | 1<<'\f' | 1<<'\r' | 1<<' '

// Error is a chunk's syntax error, as Lua 5.1 reports it:
// "chunk:Line: Message near 'Token'".
type Error struct {
	Pos     ast.Position
	Message string
	// Token is the token the error is near, as 5.1 quotes it ("<eof>" at
	// the end of the source); "" when the message names none (5.1's
	// limits).
	Token string
	// Line is 5.1's line of the error: the line its lexer was on, the
	// end of the last token read (luarun).
	Line int
	// final: the error stands as raised; the others are 5.1's to name
	// (syntax51.go)
	final bool
}

// Reason is the error without its position: "Message near 'Token'".
func (e *Error) Reason() string {
	if e.Token == "" {
		return e.Message
	}
	return e.Message + " near '" + e.Token + "'"
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Pos.Source, e.Line, e.Reason())
}

func writeChar(buf *bytes.Buffer, c int) { buf.WriteByte(byte(c)) }

func isDecimal(ch int) bool { return '0' <= ch && ch <= '9' }

func isIdent(ch int, pos int) bool {
	return ch == '_' || 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z' || isDecimal(ch) && pos > 0
}

// isAlnum is C's isalnum in the C locale.
func isAlnum(ch int) bool {
	return 'A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z' || isDecimal(ch)
}

type Scanner struct {
	Pos    ast.Position
	reader *bufio.Reader
	buf    bytes.Buffer
	// eofLine is the line the source ended on (luarun)
	eofLine int
}

func NewScanner(reader io.Reader, source string) *Scanner {
	return &Scanner{
		Pos: ast.Position{
			Source: source,
			Line:   1,
			Column: 0,
		},
		reader: bufio.NewReaderSize(reader, 4096),
	}
}

// lexError is 5.1's luaX_lexerror: msg near the text near, on the line
// the scanner is on.
func (sc *Scanner) lexError(msg, near string) *Error {
	return &Error{Pos: sc.Pos, Message: msg, Token: near, Line: sc.Line()}
}

// Line is the line the scanner is on, 5.1's linenumber: the source's
// last line once it has read all of it.
func (sc *Scanner) Line() int { return sc.line(sc.Pos) }

// line is pos's line, or the last line when pos is the end of the source.
func (sc *Scanner) line(pos ast.Position) int {
	if pos.Line == EOF {
		return sc.eofLine
	}
	return pos.Line
}

func (sc *Scanner) readNext() int {
	ch, err := sc.reader.ReadByte()
	if err == io.EOF {
		return EOF
	}
	return int(ch)
}

func (sc *Scanner) Newline(ch int) {
	if ch < 0 {
		return
	}
	sc.Pos.Line += 1
	sc.Pos.Column = 0
	next := sc.Peek()
	if ch == '\n' && next == '\r' || ch == '\r' && next == '\n' {
		sc.reader.ReadByte()
	}
}

// Next reads a character; a newline ("\n", "\r", "\n\r" or "\r\n", one
// line as 5.1's inclinenumber counts it) is read as '\n'.
func (sc *Scanner) Next() int {
	ch := sc.readNext()
	switch ch {
	case '\n', '\r':
		sc.Newline(ch)
		ch = int('\n')
	case EOF:
		if sc.Pos.Line != EOF {
			sc.eofLine = sc.Pos.Line
		}
		sc.Pos.Line = EOF
		sc.Pos.Column = 0
	default:
		sc.Pos.Column++
	}
	return ch
}

func (sc *Scanner) Peek() int {
	ch := sc.readNext()
	if ch != EOF {
		sc.reader.UnreadByte()
	}
	return ch
}

func (sc *Scanner) skipWhiteSpace() int {
	ch := sc.Next()
	for ; whitespace&(1<<uint(ch)) != 0; ch = sc.Next() {
	}
	return ch
}

// skipComment skips a comment, its "--" read: a long one when a long
// bracket follows, else the rest of the line.
func (sc *Scanner) skipComment() error {
	if sc.Peek() == '[' {
		sc.Next()
		sep := sc.skipSep('[', &sc.buf)
		sc.buf.Reset()
		if sep >= 0 {
			return sc.scanLongString(sep, &sc.buf, false)
		}
	}
	for ch := sc.Next(); ch != '\n' && ch != EOF; ch = sc.Next() {
	}
	return nil
}

func (sc *Scanner) scanIdent(ch int, buf *bytes.Buffer) {
	writeChar(buf, ch)
	for isIdent(sc.Peek(), 1) {
		writeChar(buf, sc.Next())
	}
}

// scanNumber reads a numeral from its first digit ch as 5.1's
// read_numeral: digits and dots, an exponent's sign, then letters and
// digits; what luaO_str2d does not read is malformed.
func (sc *Scanner) scanNumber(ch int, buf *bytes.Buffer) error {
	writeChar(buf, ch)
	for ch = sc.Peek(); isDecimal(ch) || ch == '.'; ch = sc.Peek() {
		writeChar(buf, sc.Next())
	}
	if ch == 'e' || ch == 'E' {
		writeChar(buf, sc.Next())
		if ch = sc.Peek(); ch == '-' || ch == '+' {
			writeChar(buf, sc.Next())
		}
	}
	for ch = sc.Peek(); isAlnum(ch) || ch == '_'; ch = sc.Peek() {
		writeChar(buf, sc.Next())
	}
	if !isDecimalNumeral(buf.Bytes()) {
		if _, ok := ParseNumber(buf.String()); !ok {
			return sc.lexError("malformed number", buf.String())
		}
	}
	return nil
}

// isDecimalNumeral: b, a numeral, is digits with at most one '.', which
// luaO_str2d reads (most numerals: the lexer need not convert them).
func isDecimalNumeral(b []byte) bool {
	dots := 0
	for _, c := range b {
		if c == '.' {
			dots++
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return dots <= 1
}

// scanString reads a quoted string as 5.1's read_string, the quote
// written and read: buf gets the string as 5.1's buffer holds it (its
// quotes, its escapes decoded).
func (sc *Scanner) scanString(quote int, buf *bytes.Buffer) error {
	writeChar(buf, quote)
	for {
		switch ch := sc.Next(); ch {
		case quote:
			writeChar(buf, ch)
			return nil
		case EOF:
			return sc.lexError("unfinished string", "<eof>")
		case '\n':
			err := sc.lexError("unfinished string", buf.String())
			err.Line-- // 5.1 has not read the newline
			return err
		case '\\':
			if err := sc.scanEscape(buf); err != nil {
				return err
			}
		default:
			writeChar(buf, ch)
		}
	}
}

var escapes = [256]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// scanEscape reads an escape sequence, its backslash read.
func (sc *Scanner) scanEscape(buf *bytes.Buffer) error {
	ch := sc.Peek()
	switch {
	case ch == EOF: // unfinished: scanString says so
	case ch == '\n' || ch == '\r':
		writeChar(buf, sc.Next())
	case isDecimal(ch): // \ddd
		c := 0
		for i := 0; i < 3 && isDecimal(sc.Peek()); i++ {
			c = 10*c + sc.Next() - '0'
		}
		if c > 255 {
			return sc.lexError("escape sequence too large", buf.String())
		}
		writeChar(buf, c)
	case escapes[ch] != 0:
		sc.Next()
		buf.WriteByte(escapes[ch])
	default: // \\, \", \' and any other character stand for themselves
		writeChar(buf, sc.Next())
	}
	return nil
}

// skipSep is 5.1's skip_sep, the bracket s ('[' or ']') read: it reads
// the '='s that follow and returns their count when s follows them (a
// long bracket), else -count-1. buf gets what it read.
func (sc *Scanner) skipSep(s int, buf *bytes.Buffer) int {
	writeChar(buf, s)
	count := 0
	for sc.Peek() == '=' {
		writeChar(buf, sc.Next())
		count++
	}
	if sc.Peek() == s {
		return count
	}
	return -count - 1
}

// scanLongString reads a long string or comment (isString false: buf
// is only scratch) as 5.1's read_long_string, its opening bracket read
// up to the second '[' (skipSep): buf gets the string with its brackets,
// less a first newline. A "[[" in a level-0 one is 5.1's
// LUA_COMPAT_LSTR error.
func (sc *Scanner) scanLongString(sep int, buf *bytes.Buffer, isString bool) error {
	writeChar(buf, sc.Next()) // the second '['
	if ch := sc.Peek(); ch == '\n' || ch == '\r' {
		sc.Next()
	}
	for {
		switch ch := sc.Next(); ch {
		case EOF:
			if isString {
				return sc.lexError("unfinished long string", "<eof>")
			}
			return sc.lexError("unfinished long comment", "<eof>")
		case '[':
			if sc.skipSep('[', buf) == sep {
				writeChar(buf, sc.Next())
				if sep == 0 {
					return sc.lexError("nesting of [[...]] is deprecated", "[")
				}
			}
		case ']':
			if sc.skipSep(']', buf) == sep {
				writeChar(buf, sc.Next())
				return nil
			}
		case '\n':
			writeChar(buf, ch)
			if !isString {
				buf.Reset()
			}
		default:
			writeChar(buf, ch)
		}
	}
}

var reservedWords = map[string]int{
	"and": TAnd, "break": TBreak, "do": TDo, "else": TElse, "elseif": TElseIf,
	"end": TEnd, "false": TFalse, "for": TFor, "function": TFunction,
	"if": TIf, "in": TIn, "local": TLocal, "nil": TNil, "not": TNot, "or": TOr,
	"return": TReturn, "repeat": TRepeat, "then": TThen, "true": TTrue,
	"until": TUntil, "while": TWhile}

// luarun: "goto" is a name, as in Lua 5.1 (gopher-lua reserved it for
// its goto statement, a 5.2 feature, so 5.1 code using goto as a name
// or field did not parse), and "::" is two ':' (gopher-lua's labels).

// Scan reads the next token; at the end of the source, one of type EOF.
func (sc *Scanner) Scan() (ast.Token, error) {
	for {
		tok, again, err := sc.scan()
		if !again {
			tok.Name = TokenName(int(tok.Type))
			return tok, err
		}
	}
}

// scan reads a token, or a comment (again).
func (sc *Scanner) scan() (tok ast.Token, again bool, err error) {
	// one buffer for every token (a token's text is copied out of it by
	// buf.String): a fresh one per token was a third of the lexer's
	// allocations (luarun)
	buf := &sc.buf
	buf.Reset()
	ch := sc.skipWhiteSpace()
	tok.Pos = sc.Pos
	tok.Type = ch
	switch {
	case isIdent(ch, 0):
		sc.scanIdent(ch, buf)
		tok.Str = buf.String()
		tok.Type = TIdent
		if typ, ok := reservedWords[tok.Str]; ok {
			tok.Type = typ
		}
		return tok, false, nil
	case isDecimal(ch):
		err = sc.scanNumber(ch, buf)
		tok.Type, tok.Str = TNumber, buf.String()
		return tok, false, err
	}
	switch ch {
	case EOF:
	case '-':
		if sc.Peek() == '-' {
			sc.Next()
			err = sc.skipComment()
			return tok, err == nil, err
		}
	case '"', '\'':
		err = sc.scanString(ch, buf)
		tok.Type, tok.Raw = TString, buf.String()
		if err == nil {
			tok.Str = tok.Raw[1 : len(tok.Raw)-1]
		}
	case '[':
		sep := sc.skipSep('[', buf)
		switch {
		case sep >= 0:
			err = sc.scanLongString(sep, buf, true)
			tok.Type, tok.Raw = TString, buf.String()
			if err == nil {
				tok.Str = tok.Raw[sep+2 : len(tok.Raw)-sep-2]
			}
		case sep != -1:
			err = sc.lexError("invalid long string delimiter", buf.String())
		}
	case '=', '<', '>', '~':
		if sc.Peek() == '=' {
			sc.Next()
			tok.Type, tok.Str = withEquals(ch)
		}
	case '.':
		writeChar(buf, ch)
		switch next := sc.Peek(); {
		case next == '.':
			writeChar(buf, sc.Next())
			tok.Type = T2Comma
			if sc.Peek() == '.' {
				writeChar(buf, sc.Next())
				tok.Type = T3Comma
			}
		case isDecimal(next):
			err = sc.scanNumber(sc.Next(), buf)
			tok.Type = TNumber
		}
		tok.Str = buf.String()
	}
	if tok.Str == "" && tok.Type >= 0 && tok.Type < 256 { // a single character
		tok.Str = string([]byte{byte(ch)})
	}
	return tok, false, err
}

// withEquals is the token of ch followed by '='.
func withEquals(ch int) (int, string) {
	switch ch {
	case '=':
		return TEqeq, "=="
	case '<':
		return TLte, "<="
	case '>':
		return TGte, ">="
	}
	return TNeq, "~="
}

// yacc interface {{{

type Lexer struct {
	scanner *Scanner
	Stmts   []ast.Stmt
	// Token is the last token read
	Token ast.Token
	// luarun: the nesting 5.1's recursive parser would be in (levels):
	// open brackets and blocks, each with the chain of right-associative
	// operators ('..', '^') its enclosing level had
	chains   []int
	chainSum int // the sum of chains
	chain    int // '..' and '^' in a row at this level
	// luarun: the token that opened each level of chains, and the types
	// of the two tokens read before the last one (fieldName)
	opens    []int
	previous [2]int
	// luarun: the lines the last token read and the one before it end on
	// (EndLine)
	tokEnd, prevEnd int
	// luarun: the locals and upvalues 5.1's parser would know (scope.go)
	// and the line of the last 'function' read
	scopes   scopes
	funcLine int
	// luarun: called once per token (ParseTick); an error it returns
	// ends the parse with an *Interrupted
	tick func() error
}

// EndLine is the line the last token the parser consumed ends on, Lua
// 5.1's lastline: the last token read, or the one before it when the
// parser has read a lookahead token (luarun).
func (lx *Lexer) EndLine(lookahead bool) int {
	if lookahead {
		return lx.prevEnd
	}
	return lx.tokEnd
}

func (lx *Lexer) Lex(lval *yySymType) int {
	lastLine := lx.scanner.Pos.Line // where the token before ended
	if lx.tick != nil {
		if err := lx.tick(); err != nil {
			panic(&Interrupted{Err: err})
		}
	}
	tok, err := lx.scanner.Scan()
	if err != nil {
		panic(err)
	}
	tok.NewLine = tok.Pos.Line != lastLine && !(tok.Type == '(' && lx.fieldName())
	lx.prevEnd = lx.tokEnd
	lx.previous = [2]int{lx.Token.Type, lx.previous[0]}
	lx.Token = tok
	switch {
	case tok.Type < 0:
		return 0
	case tok.Type == 0: // a NUL character, which goyacc would take for the end
		return unknownChar
	}
	lx.tokEnd = lx.scanner.Pos.Line
	lx.countLevels(tok)
	if tok.Type == TFunction {
		lx.funcLine = tok.Pos.Line
	}
	lval.token = tok
	return int(tok.Type)
}

// fieldName reports whether the last token read is a name that begins
// a table constructor's field: 5.1's parser reads the token after it
// before it takes the name, so that a '(' there is never on a later line
// than the token before it (lastline), and never an ambiguous call.
func (lx *Lexer) fieldName() bool {
	if lx.Token.Type != TIdent || len(lx.opens) == 0 || lx.opens[len(lx.opens)-1] != '{' {
		return false
	}
	before := lx.previous[0]
	return before == '{' || before == ',' || before == ';'
}

// unknownChar is a token no rule takes (goyacc's $unk).
const unknownChar = 1 << 24

// maxSyntaxLevels is Lua 5.1's LUAI_MAXCCALLS, the deepest its parser
// recurses.
const maxSyntaxLevels = 200

// countLevels follows the nesting tok makes and raises 5.1's "chunk has
// too many syntax levels" past maxSyntaxLevels (luarun: gopher-lua's
// parser is not recursive and had no limit). A level is an open bracket
// or block (do, if, function, repeat: closed by end or until) or a '..'
// or '^' in a chain of them, which 5.1's subexpr nests.
func (lx *Lexer) countLevels(tok ast.Token) {
	switch tok.Type {
	case '(', '{', '[', TDo, TIf, TFunction, TRepeat:
		lx.chains = append(lx.chains, lx.chain)
		lx.opens = append(lx.opens, tok.Type)
		lx.chainSum += lx.chain
		lx.chain = 0
	case ')', '}', ']', TEnd, TUntil:
		if n := len(lx.chains); n > 0 {
			lx.chain = lx.chains[n-1]
			lx.chainSum -= lx.chain
			lx.chains = lx.chains[:n-1]
			lx.opens = lx.opens[:n-1]
		}
	case T2Comma, '^':
		lx.chain++
	case ',', ';', '=', '<', '>', TEqeq, TNeq, TLte, TGte:
		lx.chain = 0
	default:
		if tok.Type >= TAnd && tok.Type <= TWhile { // other reserved words
			lx.chain = 0
		}
	}
	if len(lx.chains)+lx.chainSum+lx.chain > maxSyntaxLevels {
		panic(&Error{Pos: tok.Pos, Message: "chunk has too many syntax levels", Line: lx.scanner.line(tok.Pos), final: true})
	}
}

// Error is goyacc's syntax error and the grammar's actions': the
// token it is near is the last one read. It is 5.1's parser's to name
// (Parse).
func (lx *Lexer) Error(message string) {
	lx.TokenError(lx.Token, message)
}

func (lx *Lexer) TokenError(tok ast.Token, message string) {
	panic(&Error{Pos: tok.Pos, Message: message, Token: tokenText(tok), Line: lx.scanner.Line()})
}

// tokenText is tok as a syntax error quotes it, 5.1's txtToken: a
// string as written, a control character as char(N), '<eof>' for the
// end, anything else as its text.
func tokenText(tok ast.Token) string {
	switch {
	case tok.Type == EOF:
		return "<eof>"
	case tok.Raw != "":
		return tok.Raw
	case tok.Type == 0: // 5.1's luaX_lexerror takes token 0 for none
		return ""
	case tok.Type > 0 && tok.Type < ' ' || tok.Type == 127:
		return fmt.Sprintf("char(%d)", tok.Type)
	}
	return tok.Str
}

// Interrupted is the error of a parse or compile that its tick function
// stopped (luarun: a killed process's load, lua.LState.Tick); Err is the
// tick's error.
type Interrupted struct{ Err error }

func (e *Interrupted) Error() string { return e.Err.Error() }
func (e *Interrupted) Unwrap() error { return e.Err }

// Parse parses a chunk. Its syntax error is Lua 5.1's: where the
// grammar fails (or a lexical error stops it), the source is read again
// by a recognizer of 5.1's parser, which says what 5.1 would have, and
// where (syntax51.go); the limits (scope.go, countLevels) stand as
// raised.
func Parse(reader io.Reader, name string) (chunk []ast.Stmt, err error) {
	return ParseTick(reader, name, nil)
}

// ParseTick is Parse calling tick (if not nil) before every token: a
// non-nil error from it ends the parse with that error as an
// *Interrupted (luarun).
func ParseTick(reader io.Reader, name string, tick func() error) (chunk []ast.Stmt, err error) {
	var read bytes.Buffer // what the parser read, for the recognizer
	lexer := &Lexer{scanner: NewScanner(io.TeeReader(reader, &read), name), tick: tick}
	lexer.scopes.init()
	defer func() {
		if e := recover(); e != nil {
			chunk = nil
			pe, ok := e.(*Error)
			if !ok {
				if err, ok = e.(error); !ok { // luarun: it was dropped (no error, no chunk)
					err = fmt.Errorf("%s: internal error: %v", name, e)
				}
				return
			}
			if !pe.final {
				pe = syntaxError51(io.MultiReader(&read, reader), name, pe)
			}
			err = pe
		}
	}()
	yyParse(lexer)
	return lexer.Stmts, nil
}

// }}}

// Dump {{{

func isInlineDumpNode(rv reflect.Value) bool {
	switch rv.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Interface, reflect.Ptr:
		return false
	default:
		return true
	}
}

func dump(node interface{}, level int, s string) string {
	rt := reflect.TypeOf(node)
	if fmt.Sprint(rt) == "<nil>" {
		return strings.Repeat(s, level) + "<nil>"
	}

	rv := reflect.ValueOf(node)
	buf := []string{}
	switch rt.Kind() {
	case reflect.Slice:
		if rv.Len() == 0 {
			return strings.Repeat(s, level) + "<empty>"
		}
		for i := 0; i < rv.Len(); i++ {
			buf = append(buf, dump(rv.Index(i).Interface(), level, s))
		}
	case reflect.Ptr:
		vt := rv.Elem()
		tt := rt.Elem()
		indicies := []int{}
		for i := 0; i < tt.NumField(); i++ {
			if strings.Index(tt.Field(i).Name, "Base") > -1 {
				continue
			}
			indicies = append(indicies, i)
		}
		switch {
		case len(indicies) == 0:
			return strings.Repeat(s, level) + "<empty>"
		case len(indicies) == 1 && isInlineDumpNode(vt.Field(indicies[0])):
			for _, i := range indicies {
				buf = append(buf, strings.Repeat(s, level)+"- Node$"+tt.Name()+": "+dump(vt.Field(i).Interface(), 0, s))
			}
		default:
			buf = append(buf, strings.Repeat(s, level)+"- Node$"+tt.Name())
			for _, i := range indicies {
				if isInlineDumpNode(vt.Field(i)) {
					inf := dump(vt.Field(i).Interface(), 0, s)
					buf = append(buf, strings.Repeat(s, level+1)+tt.Field(i).Name+": "+inf)
				} else {
					buf = append(buf, strings.Repeat(s, level+1)+tt.Field(i).Name+": ")
					buf = append(buf, dump(vt.Field(i).Interface(), level+2, s))
				}
			}
		}
	default:
		buf = append(buf, strings.Repeat(s, level)+fmt.Sprint(node))
	}
	return strings.Join(buf, "\n")
}

func Dump(chunk []ast.Stmt) string {
	return dump(chunk, 0, "   ")
}

// }}
