package lua

// syntax51_test.go: syntax errors as Lua 5.1 reports them (lua/parse:
// its lexer is 5.1's llex, and where the grammar fails syntax51.go
// reads the chunk as 5.1's parser to name the error). Each case is a
// chunk given to loadstring, its message (or "ok") compared with
// lua5.1's: checkLua51 runs lua5.1 on the same script when it is
// installed. They failed before: the parser said "syntax error near
// 'x'" or "parse error" for all of them, the lexer accepted 1e and
// '\300', and its messages and lines were gopher-lua's.

import "testing"

// tryChunks defines try, which prints what loadstring says of a chunk.
const tryChunks = `local function try(s) local f, e = loadstring(s) print(e or "ok") end
`

// TestSyntaxErrorsExpectedAs51: what 5.1's parser expected where it
// stopped: a token ('X' expected), one that closes a construct opened on
// an earlier line ('X' expected (to close 'Y' at line N)), a name,
// anything that starts an expression (unexpected symbol).
func TestSyntaxErrorsExpectedAs51(t *testing.T) {
	checkLua51(t, tryChunks+`try("x")
try("x y")
try("x = ")
try("x = 1 +")
try("x, y z")
try("local")
try("local 1")
try("local x y")
try("local function 1")
try("function 1")
try("function f")
try("function f(1)")
try("function f(a,)")
try("function f(a b)")
try("function f()")
try("function f()\n\nx = 1")
try("function a.b:c.d() end")
try("if x")
try("if x then")
try("if x\nthen\n")
try("if x then else elseif")
try("if x y")
try("if x then end end")
try("while x")
try("while x do\n\n")
try("for")
try("for x")
try("for x y")
try("for x = 1")
try("for x = 1, 2 y")
try("for x, y = 1")
try("for x in y z")
try("do\n\nx = 1")
try("do end end")
try("end")
try("repeat\n\n x = 1")
try("repeat until")
try("return return")
try("return 1 x")
try("return 1;;")
try("do return 1 x end")
try("while 1 do break break end")
try("x = (1")
try("x = (1\n\n")
try("x = f(1\n\n")
try("f(1 2)")
try("x = {")
try("x = {\n1")
try("x = {1 2}")
try("x = {[1] 2}")
try("x = {[1 2}")
try("x = {x = }")
try("x = a.")
try("x = a.1")
try("x = a[1")
try("x = 1 + + 2")
try("x = function")
try("x = function(..., a) end")
try("while true do\n  if x then\n    y = 1\n  else\n")
try("function f(\n\na,\n\nb\n\n")
try("if x then elseif y else end")
try("until x")
try("::x::")
try("goto x")
try("x = a ? b : c")
`, `[string "x"]:1: '=' expected near '<eof>'
[string "x y"]:1: '=' expected near 'y'
[string "x = "]:1: unexpected symbol near '<eof>'
[string "x = 1 +"]:1: unexpected symbol near '<eof>'
[string "x, y z"]:1: '=' expected near 'z'
[string "local"]:1: '<name>' expected near '<eof>'
[string "local 1"]:1: '<name>' expected near '1'
[string "local x y"]:1: '=' expected near '<eof>'
[string "local function 1"]:1: '<name>' expected near '1'
[string "function 1"]:1: '<name>' expected near '1'
[string "function f"]:1: '(' expected near '<eof>'
[string "function f(1)"]:1: <name> or '...' expected near '1'
[string "function f(a,)"]:1: <name> or '...' expected near ')'
[string "function f(a b)"]:1: ')' expected near 'b'
[string "function f()"]:1: 'end' expected near '<eof>'
[string "function f()..."]:3: 'end' expected (to close 'function' at line 1) near '<eof>'
[string "function a.b:c.d() end"]:1: '(' expected near '.'
[string "if x"]:1: 'then' expected near '<eof>'
[string "if x then"]:1: 'end' expected near '<eof>'
[string "if x..."]:3: 'end' expected (to close 'if' at line 1) near '<eof>'
[string "if x then else elseif"]:1: 'end' expected near 'elseif'
[string "if x y"]:1: 'then' expected near 'y'
[string "if x then end end"]:1: '<eof>' expected near 'end'
[string "while x"]:1: 'do' expected near '<eof>'
[string "while x do..."]:3: 'end' expected (to close 'while' at line 1) near '<eof>'
[string "for"]:1: '<name>' expected near '<eof>'
[string "for x"]:1: '=' or 'in' expected near '<eof>'
[string "for x y"]:1: '=' or 'in' expected near 'y'
[string "for x = 1"]:1: ',' expected near '<eof>'
[string "for x = 1, 2 y"]:1: 'do' expected near 'y'
[string "for x, y = 1"]:1: 'in' expected near '='
[string "for x in y z"]:1: 'do' expected near 'z'
[string "do..."]:3: 'end' expected (to close 'do' at line 1) near '<eof>'
[string "do end end"]:1: '<eof>' expected near 'end'
[string "end"]:1: '<eof>' expected near 'end'
[string "repeat..."]:3: 'until' expected (to close 'repeat' at line 1) near '<eof>'
[string "repeat until"]:1: unexpected symbol near '<eof>'
[string "return return"]:1: unexpected symbol near 'return'
[string "return 1 x"]:1: '<eof>' expected near 'x'
[string "return 1;;"]:1: '<eof>' expected near ';'
[string "do return 1 x end"]:1: 'end' expected near 'x'
[string "while 1 do break break end"]:1: 'end' expected near 'break'
[string "x = (1"]:1: ')' expected near '<eof>'
[string "x = (1..."]:3: ')' expected (to close '(' at line 1) near '<eof>'
[string "x = f(1..."]:3: ')' expected (to close '(' at line 1) near '<eof>'
[string "f(1 2)"]:1: ')' expected near '2'
[string "x = {"]:1: unexpected symbol near '<eof>'
[string "x = {..."]:2: '}' expected (to close '{' at line 1) near '<eof>'
[string "x = {1 2}"]:1: '}' expected near '2'
[string "x = {[1] 2}"]:1: '=' expected near '2'
[string "x = {[1 2}"]:1: ']' expected near '2'
[string "x = {x = }"]:1: unexpected symbol near '}'
[string "x = a."]:1: '<name>' expected near '<eof>'
[string "x = a.1"]:1: unexpected symbol near '.1'
[string "x = a[1"]:1: ']' expected near '<eof>'
[string "x = 1 + + 2"]:1: unexpected symbol near '+'
[string "x = function"]:1: '(' expected near '<eof>'
[string "x = function(..., a) end"]:1: ')' expected near ','
[string "while true do..."]:5: 'end' expected (to close 'if' at line 2) near '<eof>'
[string "function f(..."]:7: ')' expected near '<eof>'
[string "if x then elseif y else end"]:1: 'then' expected near 'else'
[string "until x"]:1: '<eof>' expected near 'until'
[string "::x::"]:1: unexpected symbol near ':'
[string "goto x"]:1: '=' expected near 'x'
[string "x = a ? b : c"]:1: unexpected symbol near '?'
`)
}

// TestSyntaxErrorsOfStatementsAs51: an expression that is no statement,
// and the checks 5.1's parser makes besides the grammar: a call's
// arguments, a '(' on a new line, break outside a loop, '...' outside a
// vararg function.
func TestSyntaxErrorsOfStatementsAs51(t *testing.T) {
	checkLua51(t, tryChunks+`try("f() = 1")
try("(x) = 1")
try("x, f() = 1")
try("f.x, g() = 1, 2")
try("(f)")
try("((f))")
try("a:b = 1")
try("a.b:c = 1")
try("x = a:b.c")
try("f:m'x' = 1")
try("f\n(1)")
try("a = b\n(f)()")
try("local function f() end\n(f)()")
try("x = {f\n(1)}")
try("x = {a.f\n(1)}")
try("x = f\n{1}")
try("f (\n)")
try("break")
try("x = 1 break")
try("while 1 do break x end")
try("while true do local function f() break end end")
try("repeat local x until x break")
try("if a then break end")
try("for k in pairs(t) do break end")
try("function f() return ... end")
try("function f() a = {...} end")
try("function f(a, ...) local function g() return ... end end")
try("x = ...")
try("function f(...) return ... end")
`, `[string "f() = 1"]:1: unexpected symbol near '='
[string "(x) = 1"]:1: syntax error near '='
[string "x, f() = 1"]:1: syntax error near '='
[string "f.x, g() = 1, 2"]:1: syntax error near '='
[string "(f)"]:1: syntax error near '<eof>'
[string "((f))"]:1: syntax error near '<eof>'
[string "a:b = 1"]:1: function arguments expected near '='
[string "a.b:c = 1"]:1: function arguments expected near '='
[string "x = a:b.c"]:1: function arguments expected near '.'
[string "f:m'x' = 1"]:1: unexpected symbol near '='
[string "f..."]:2: ambiguous syntax (function call x new statement) near '('
[string "a = b..."]:2: ambiguous syntax (function call x new statement) near '('
ok
ok
[string "x = {a.f..."]:2: ambiguous syntax (function call x new statement) near '('
ok
ok
[string "break"]:1: no loop to break near '<eof>'
[string "x = 1 break"]:1: no loop to break near '<eof>'
[string "while 1 do break x end"]:1: 'end' expected near 'x'
[string "while true do local function f() break end end"]:1: no loop to break near 'end'
[string "repeat local x until x break"]:1: no loop to break near '<eof>'
[string "if a then break end"]:1: no loop to break near 'end'
ok
[string "function f() return ... end"]:1: cannot use '...' outside a vararg function near '...'
[string "function f() a = {...} end"]:1: cannot use '...' outside a vararg function near '...'
[string "function f(a, ...) local function g() return ... end end"]:1: cannot use '...' outside a vararg function near '...'
ok
ok
`)
}

// TestLexicalErrorsAs51: the lexer's errors and tokens: unfinished
// strings and long brackets, malformed numbers, escapes past 255,
// invalid long delimiters, nested [[ (5.1's LUA_COMPAT_LSTR), a
// character that starts no token.
func TestLexicalErrorsAs51(t *testing.T) {
	checkLua51(t, tryChunks+`try("x = 'abc")
try("x = 'abc\ndef'")
try("x = 'ab\\")
try("x = 'a\\300'")
try("x = 'a\\255'")
try("x = 'a\\999b'")
try("x = [[abc")
try("x = [==[abc]=]")
try("x = [=abc")
try("x = [==abc")
try("--[[abc")
try("--[==[abc\n\n")
try("x = 1 --[=x\n y")
try("x = [[a [[ b]]")
try("--[[ a [[ b ]]")
try("--[==[ [[ ]==] x")
try("x = [=[ [[ ]=] y")
try("x = 3x")
try("x = 1e")
try("x = 1e+")
try("x = 0x")
try("x = 0xg")
try("x = 1..2")
try("x = 3..2")
try("x = 1.2.3")
try("x = .5 .5")
try("x = 1.5e+3x")
try("x = 0x1P")
try("x = 08")
try("x = 0x1p4")
try("x = 0x10 y")
try("x = 1 @")
try("$")
try("~")
try("x = 1 ~ 2")
try("x = \1")
try("x = 1 \127")
try("x = 1 // 2")
`, `[string "x = 'abc"]:1: unfinished string near '<eof>'
[string "x = 'abc..."]:1: unfinished string near ''abc'
[string "x = 'ab\"]:1: unfinished string near '<eof>'
[string "x = 'a\300'"]:1: escape sequence too large near ''a'
ok
[string "x = 'a\999b'"]:1: escape sequence too large near ''a'
[string "x = [[abc"]:1: unfinished long string near '<eof>'
[string "x = [==[abc]=]"]:1: unfinished long string near '<eof>'
[string "x = [=abc"]:1: invalid long string delimiter near '[='
[string "x = [==abc"]:1: invalid long string delimiter near '[=='
[string "--[[abc"]:1: unfinished long comment near '<eof>'
[string "--[==[abc..."]:3: unfinished long comment near '<eof>'
[string "x = 1 --[=x..."]:2: '=' expected near '<eof>'
[string "x = [[a [[ b]]"]:1: nesting of [[...]] is deprecated near '['
[string "--[[ a [[ b ]]"]:1: nesting of [[...]] is deprecated near '['
[string "--[==[ [[ ]==] x"]:1: '=' expected near '<eof>'
[string "x = [=[ [[ ]=] y"]:1: '=' expected near '<eof>'
[string "x = 3x"]:1: malformed number near '3x'
[string "x = 1e"]:1: malformed number near '1e'
[string "x = 1e+"]:1: malformed number near '1e+'
[string "x = 0x"]:1: malformed number near '0x'
[string "x = 0xg"]:1: malformed number near '0xg'
[string "x = 1..2"]:1: malformed number near '1..2'
[string "x = 3..2"]:1: malformed number near '3..2'
[string "x = 1.2.3"]:1: malformed number near '1.2.3'
[string "x = .5 .5"]:1: unexpected symbol near '.5'
[string "x = 1.5e+3x"]:1: malformed number near '1.5e+3x'
[string "x = 0x1P"]:1: malformed number near '0x1P'
ok
ok
[string "x = 0x10 y"]:1: '=' expected near '<eof>'
[string "x = 1 @"]:1: unexpected symbol near '@'
[string "$"]:1: unexpected symbol near '$'
[string "~"]:1: unexpected symbol near '~'
[string "x = 1 ~ 2"]:1: unexpected symbol near '~'
[string "x = "]:1: unexpected symbol near 'char(1)'
[string "x = 1 "]:1: unexpected symbol near 'char(127)'
[string "x = 1 // 2"]:1: unexpected symbol near '/'
`)
}

// TestSyntaxErrorTokensAs51: the token an error is near, as 5.1 quotes
// it (a string as read, its escapes decoded; a number as written; a long
// string less its first newline), on the line 5.1's lexer is on (the end
// of the last token read; a newline in a string is not read yet).
func TestSyntaxErrorTokensAs51(t *testing.T) {
	checkLua51(t, tryChunks+`try("x = 'abc' y")
try("x = \"a\\tb\" y")
try("x = 'a\\\nb' y")
try("x = 12.5e3 y")
try("x = [==[\nabc]==] y")
try("x = [[\r\nabc]] y")
try("x = [[\n\n]] y")
try("x = 1 y\n\n")
try("x = 1\n\n\ny z")
try("x = 1\r\ny = \r\n\r\n")
try("x = 1\ry = \r\r")
try("x = 1\n\ry = \n\r\n\r")
try("x = '\\q' y")
try("x = '\\0659' y")
try("x = 1\n\" .. (\"-- c\n\"):rep(5) .. \"x =")
try("x = [[\n\n\n")
try("--[[\n\n")
try("x = '\n")
`, `[string "x = 'abc' y"]:1: '=' expected near '<eof>'
[string "x = "a\tb" y"]:1: '=' expected near '<eof>'
[string "x = 'a\..."]:2: '=' expected near '<eof>'
[string "x = 12.5e3 y"]:1: '=' expected near '<eof>'
[string "x = [==[..."]:2: '=' expected near '<eof>'
[string "x = [[..."]:2: '=' expected near '<eof>'
[string "x = [[..."]:3: '=' expected near '<eof>'
[string "x = 1 y..."]:3: '=' expected near '<eof>'
[string "x = 1..."]:4: '=' expected near 'z'
[string "x = 1..."]:4: unexpected symbol near '<eof>'
[string "x = 1..."]:4: unexpected symbol near '<eof>'
[string "x = 1..."]:4: unexpected symbol near '<eof>'
[string "x = '\q' y"]:1: '=' expected near '<eof>'
[string "x = '\0659' y"]:1: '=' expected near '<eof>'
[string "x = 1..."]:2: unexpected symbol near '" .. ("'
[string "x = [[..."]:4: unfinished long string near '<eof>'
[string "--[[..."]:3: unfinished long comment near '<eof>'
[string "x = '..."]:1: unfinished string near '''
`)
}
