package ast

type Stmt interface {
	PositionHolder
	stmtMarker()
}

type StmtBase struct {
	Node
}

func (stmt *StmtBase) stmtMarker() {}

type AssignStmt struct {
	StmtBase

	Lhs []Expr
	Rhs []Expr
}

type LocalAssignStmt struct {
	StmtBase

	Names []string
	Exprs []Expr
	// Func: the statement is `local function name body`, whose name is
	// in scope in the body (in `local name = function body` it is not)
	// (luarun)
	Func bool
}

type FuncCallStmt struct {
	StmtBase

	Expr Expr
}

type DoBlockStmt struct {
	StmtBase

	Stmts []Stmt
	// BodyEnd is the line of the last token before the closing `end`,
	// where Lua 5.1 puts the instructions that end the block (luarun)
	BodyEnd int
}

type WhileStmt struct {
	StmtBase

	Condition Expr
	Stmts     []Stmt
	// BodyEnd is the line of the last token before `end`: the loop's
	// jump back is there in Lua 5.1 (luarun)
	BodyEnd int
}

type RepeatStmt struct {
	StmtBase

	Condition Expr
	Stmts     []Stmt
}

type IfStmt struct {
	StmtBase

	Condition Expr
	Then      []Stmt
	Else      []Stmt
	// ThenEnd is the line of the last token of the then part (the `then`
	// if it is empty): the jump over the else part is there in Lua 5.1
	// (luarun)
	ThenEnd int
}

type NumberForStmt struct {
	StmtBase

	Name  string
	Init  Expr
	Limit Expr
	Step  Expr
	Stmts []Stmt
	// BodyEnd: as WhileStmt's (luarun)
	BodyEnd int
}

type GenericForStmt struct {
	StmtBase

	Names []string
	Exprs []Expr
	Stmts []Stmt
	// BodyEnd: as WhileStmt's (luarun)
	BodyEnd int
}

type FuncDefStmt struct {
	StmtBase

	Name *FuncName
	Func *FunctionExpr
}

type ReturnStmt struct {
	StmtBase

	Exprs []Expr
}

type BreakStmt struct {
	StmtBase
}

type LabelStmt struct {
	StmtBase

	Name string
}

type GotoStmt struct {
	StmtBase

	Label string
}
