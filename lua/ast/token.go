package ast

import (
	"fmt"
)

type Position struct {
	Source string
	Line   int
	Column int
}

type Token struct {
	Type int
	Name string
	Str  string
	Pos  Position
	// NewLine: the token starts on a later line than the one the token
	// before it ended on (luarun: Lua 5.1's '(' on a new line after a
	// function expression is an ambiguous call).
	NewLine bool
	// Raw is a string token's text as written, delimiters included, which
	// a syntax error quotes as 5.1's does (luarun); "" for other tokens.
	Raw string
}

func (self *Token) String() string {
	return fmt.Sprintf("<type:%v, str:%v>", self.Name, self.Str)
}
