%{
package parse

import (
  "github.com/luarun/luarun/lua/ast"
)
%}
%type<stmts> chunk
%type<stmts> chunk1
%type<stmts> block
%type<stmts> rblock
%type<stmt>  stat
%type<stmts> elseifs
%type<stmt>  laststat
%type<funcname> funcname
%type<funcname> funcname1
%type<exprlist> varlist
%type<expr> var
%type<namelist> localnames
%type<namelist> fornames
%type<namelist> parnames
%type<token> localfunc
%type<token> fornum
%type<token> fordo
%type<token> funcopen
%type<exprlist> exprlist
%type<expr> expr
%type<expr> string
%type<expr> prefixexp
%type<expr> functioncall
%type<expr> afunctioncall
%type<exprlist> args
%type<expr> function
%type<funcexpr> funcbody
%type<parlist> parlist
%type<expr> tableconstructor
%type<fieldlist> fieldlist
%type<field> field
%type<fieldsep> fieldsep

%union {
  token  ast.Token

  stmts    []ast.Stmt
  stmt     ast.Stmt

  funcname *ast.FuncName
  funcexpr *ast.FunctionExpr

  exprlist []ast.Expr
  expr   ast.Expr

  fieldlist []*ast.Field
  field     *ast.Field
  fieldsep  string

  namelist []string
  parlist  *ast.ParList
}

/* Reserved words */
%token<token> TAnd TBreak TDo TElse TElseIf TEnd TFalse TFor TFunction TIf TIn TLocal TNil TNot TOr TReturn TRepeat TThen TTrue TUntil TWhile TGoto

/* Literals */
%token<token> TEqeq TNeq TLte TGte T2Comma T3Comma T2Colon TIdent TNumber TString '{' '('

/* Operators */
%left TOr
%left TAnd
%left '>' '<' TGte TLte TEqeq TNeq
%right T2Comma
%left '+' '-'
%left '*' '/' '%'
%right UNARY /* not # -(unary) */
%right '^'

%%

chunk: 
        chunk1 {
            $$ = $1
            if l, ok := yylex.(*Lexer); ok {
                l.Stmts = $$
            }
        } |
        chunk1 laststat {
            $2.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
            $$ = append($1, $2)
            if l, ok := yylex.(*Lexer); ok {
                l.Stmts = $$
            }
        } | 
        chunk1 laststat ';' {
            $2.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun: the ';' */
            $$ = append($1, $2)
            if l, ok := yylex.(*Lexer); ok {
                l.Stmts = $$
            }
        }

chunk1: 
        {
            $$ = []ast.Stmt{}
        } |
        chunk1 stat {
            /* luarun: a statement's last line is its last token's, as Lua 5.1's lastline */
            $2.SetLastLine(endLine(yylex, yyrcvr.char))
            $$ = append($1, $2)
        } | 
        chunk1 stat ';' {
            /* luarun: as in Lua 5.1, a ';' only ends a statement (";" and "a=1;;" are syntax errors) */
            $2.SetLastLine(endLine(yylex, yyrcvr.char)) /* the ';' */
            $$ = append($1, $2)
        }

/* luarun: the parser follows the scopes of locals as Lua 5.1's does
   (scope.go): a block opens before its first statement (blockopen) and
   closes when it is reduced, a repeat's (rblock) after its condition */
block: 
        blockopen chunk {
            yylex.(*Lexer).leaveBlock()
            $$ = $2
        }

rblock:
        blockopen chunk {
            $$ = $2
        }

blockopen:
        {
            yylex.(*Lexer).enterBlock()
        }

stat:
        varlist '=' exprlist {
            $$ = &ast.AssignStmt{Lhs: $1, Rhs: $3}
            $$.SetLine($1[0].Line())
        } |
        /* 'stat = functioncal' causes a reduce/reduce conflict */
        prefixexp {
            if _, ok := $1.(*ast.FuncCallExpr); !ok {
               yylex.(*Lexer).Error("parse error")
            } else {
              $$ = &ast.FuncCallStmt{Expr: $1}
              $$.SetLine($1.Line())
            }
        } |
        TDo block TEnd {
            $$ = &ast.DoBlockStmt{Stmts: $2, BodyEnd: blockEnd($2, $1.Pos.Line)}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($3.Pos.Line)
        } |
        TWhile expr TDo block TEnd {
            $$ = &ast.WhileStmt{Condition: $2, Stmts: $4, BodyEnd: blockEnd($4, $3.Pos.Line)}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($5.Pos.Line)
        } |
        TRepeat rblock TUntil expr {
            yylex.(*Lexer).leaveBlock() /* luarun: the condition sees the block's locals */
            $$ = &ast.RepeatStmt{Condition: $4, Stmts: $2}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($4.Line())
        } |
        TIf expr TThen block elseifs TEnd {
            $$ = &ast.IfStmt{Condition: $2, Then: $4, ThenEnd: blockEnd($4, $3.Pos.Line)}
            cur := $$
            for _, elseif := range $5 {
                cur.(*ast.IfStmt).Else = []ast.Stmt{elseif}
                cur = elseif
            }
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($6.Pos.Line)
        } |
        TIf expr TThen block elseifs TElse block TEnd {
            $$ = &ast.IfStmt{Condition: $2, Then: $4, ThenEnd: blockEnd($4, $3.Pos.Line)}
            cur := $$
            for _, elseif := range $5 {
                cur.(*ast.IfStmt).Else = []ast.Stmt{elseif}
                cur = elseif
            }
            cur.(*ast.IfStmt).Else = $7
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($8.Pos.Line)
        } |
        fornum '=' expr ',' expr fordo block TEnd {
            yylex.(*Lexer).leaveBlock()
            $$ = &ast.NumberForStmt{Name: $1.Str, Init: $3, Limit: $5, Stmts: $7, BodyEnd: blockEnd($7, $6.Pos.Line)}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($8.Pos.Line)
        } |
        fornum '=' expr ',' expr ',' expr fordo block TEnd {
            yylex.(*Lexer).leaveBlock()
            $$ = &ast.NumberForStmt{Name: $1.Str, Init: $3, Limit: $5, Step:$7, Stmts: $9, BodyEnd: blockEnd($9, $8.Pos.Line)}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($10.Pos.Line)
        } |
        TFor fornames TIn exprlist fordo block TEnd {
            yylex.(*Lexer).leaveBlock()
            $$ = &ast.GenericForStmt{Names:$2, Exprs:$4, Stmts: $6, BodyEnd: blockEnd($6, $5.Pos.Line)}
            /* luarun: the loop's own instructions are on the line the explist starts on, as 5.1's forlist takes it */
            $$.SetLine($4[0].Line())
            $$.SetLastLine($7.Pos.Line)
        } |
        TFunction funcname funcbody {
            $$ = &ast.FuncDefStmt{Name: $2, Func: $3}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($3.LastLine())
        } |
        localfunc funcbody {
            $$ = &ast.LocalAssignStmt{Names:[]string{$1.Str}, Exprs: []ast.Expr{$2}, Func: true}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($2.LastLine())
        } | 
        TLocal localnames '=' exprlist {
            yylex.(*Lexer).activate() /* luarun: after the explist, as 5.1's localstat */
            $$ = &ast.LocalAssignStmt{Names: $2, Exprs:$4}
            $$.SetLine($1.Pos.Line)
        } |
        TLocal localnames {
            yylex.(*Lexer).activate()
            $$ = &ast.LocalAssignStmt{Names: $2, Exprs:[]ast.Expr{}}
            $$.SetLine($1.Pos.Line)
        } |
        T2Colon TIdent T2Colon {
            $$ = &ast.LabelStmt{Name: $2.Str}
            $$.SetLine($1.Pos.Line)
        } |
        TGoto TIdent {
            $$ = &ast.GotoStmt{Label: $2.Str}
            $$.SetLine($1.Pos.Line)
        }

/* luarun: a numeric for's name, at the position of its 'for' (reduced
   on the lookahead '=', 5.1's token when it declares the loop's locals) */
fornum:
        TFor TIdent {
            yylex.(*Lexer).declareFor(&numForLocals, $2.Str, yyrcvr.char)
            $$ = $2
            $$.Pos = $1.Pos
        }

fornames:
        TIdent {
            yylex.(*Lexer).declareFor(&genForLocals, $1.Str, yyrcvr.char)
            $$ = []string{$1.Str}
        } | 
        fornames ','  TIdent {
            yylex.(*Lexer).declare($3.Str, yyrcvr.char)
            $$ = append($1, $3.Str)
        }

/* a for loop's 'do': its locals become active */
fordo:
        TDo {
            yylex.(*Lexer).activate()
            $$ = $1
        }

/* luarun: a local function's name, at the position of its 'local'; the
   local is active in the function's body */
localfunc:
        TLocal TFunction TIdent {
            yylex.(*Lexer).declare($3.Str, yyrcvr.char)
            yylex.(*Lexer).activate()
            $$ = $3
            $$.Pos = $1.Pos
        }

elseifs: 
        {
            $$ = []ast.Stmt{}
        } | 
        elseifs TElseIf expr TThen block {
            $$ = append($1, &ast.IfStmt{Condition: $3, Then: $5, ThenEnd: blockEnd($5, $4.Pos.Line)})
            $$[len($$)-1].SetLine($2.Pos.Line)
        }

laststat:
        TReturn {
            $$ = &ast.ReturnStmt{Exprs:nil}
            $$.SetLine($1.Pos.Line)
        } |
        TReturn exprlist {
            $$ = &ast.ReturnStmt{Exprs:$2}
            $$.SetLine($1.Pos.Line)
        } |
        TBreak  {
            $$ = &ast.BreakStmt{}
            $$.SetLine($1.Pos.Line)
        }

funcname: 
        funcname1 {
            yylex.(*Lexer).funcStatement(false) /* luarun */
            $$ = $1
        } |
        funcname1 ':' TIdent {
            yylex.(*Lexer).funcStatement(true) /* luarun */
            $$ = &ast.FuncName{Func:nil, Receiver:$1.Func, Method: $3.Str}
        }

funcname1:
        TIdent {
            yylex.(*Lexer).resolve($1.Str, yyrcvr.char) /* luarun */
            $$ = &ast.FuncName{Func: &ast.IdentExpr{Value:$1.Str}}
            $$.Func.SetLine($1.Pos.Line)
        } | 
        funcname1 '.' TIdent {
            key:= &ast.StringExpr{Value:$3.Str}
            key.SetLine($3.Pos.Line)
            fn := &ast.AttrGetExpr{Object: $1.Func, Key: key}
            fn.SetLine($3.Pos.Line)
            $$ = &ast.FuncName{Func: fn}
        }

varlist:
        var {
            $$ = []ast.Expr{$1}
        } | 
        varlist ',' var {
            $$ = append($1, $3)
        }

var:
        TIdent {
            yylex.(*Lexer).resolve($1.Str, yyrcvr.char) /* luarun */
            $$ = &ast.IdentExpr{Value:$1.Str}
            $$.SetLine($1.Pos.Line)
        } |
        prefixexp '[' expr ']' {
            $$ = &ast.AttrGetExpr{Object: $1, Key: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } | 
        prefixexp '.' TIdent {
            key := &ast.StringExpr{Value:$3.Str}
            key.SetLine($3.Pos.Line)
            $$ = &ast.AttrGetExpr{Object: $1, Key: key}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        }

/* luarun: the names of a local statement, declared as they are read */
localnames:
        TIdent {
            yylex.(*Lexer).declare($1.Str, yyrcvr.char)
            $$ = []string{$1.Str}
        } | 
        localnames ','  TIdent {
            yylex.(*Lexer).declare($3.Str, yyrcvr.char)
            $$ = append($1, $3.Str)
        }

exprlist:
        expr {
            $$ = []ast.Expr{$1}
        } |
        exprlist ',' expr {
            $$ = append($1, $3)
        }

expr:
        TNil {
            $$ = &ast.NilExpr{}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } | 
        TFalse {
            $$ = &ast.FalseExpr{}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } | 
        TTrue {
            $$ = &ast.TrueExpr{}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } | 
        TNumber {
            $$ = &ast.NumberExpr{Value: $1.Str}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } | 
        T3Comma {
            $$ = &ast.Comma3Expr{}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        function {
            $$ = $1
        } | 
        prefixexp {
            $$ = $1
        } |
        string {
            $$ = $1
        } |
        tableconstructor {
            $$ = $1
        } |
        expr TOr expr {
            $$ = &ast.LogicalOpExpr{Lhs: $1, Operator: "or", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr TAnd expr {
            $$ = &ast.LogicalOpExpr{Lhs: $1, Operator: "and", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '>' expr {
            $$ = &ast.RelationalOpExpr{Lhs: $1, Operator: ">", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '<' expr {
            $$ = &ast.RelationalOpExpr{Lhs: $1, Operator: "<", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr TGte expr {
            $$ = &ast.RelationalOpExpr{Lhs: $1, Operator: ">=", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr TLte expr {
            $$ = &ast.RelationalOpExpr{Lhs: $1, Operator: "<=", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr TEqeq expr {
            $$ = &ast.RelationalOpExpr{Lhs: $1, Operator: "==", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr TNeq expr {
            $$ = &ast.RelationalOpExpr{Lhs: $1, Operator: "~=", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr T2Comma expr {
            $$ = &ast.StringConcatOpExpr{Lhs: $1, Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '+' expr {
            $$ = &ast.ArithmeticOpExpr{Lhs: $1, Operator: "+", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '-' expr {
            $$ = &ast.ArithmeticOpExpr{Lhs: $1, Operator: "-", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '*' expr {
            $$ = &ast.ArithmeticOpExpr{Lhs: $1, Operator: "*", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '/' expr {
            $$ = &ast.ArithmeticOpExpr{Lhs: $1, Operator: "/", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '%' expr {
            $$ = &ast.ArithmeticOpExpr{Lhs: $1, Operator: "%", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        expr '^' expr {
            $$ = &ast.ArithmeticOpExpr{Lhs: $1, Operator: "^", Rhs: $3}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        '-' expr %prec UNARY {
            $$ = &ast.UnaryMinusOpExpr{Expr: $2}
            $$.SetLine($2.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        TNot expr %prec UNARY {
            $$ = &ast.UnaryNotOpExpr{Expr: $2}
            $$.SetLine($2.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        '#' expr %prec UNARY {
            $$ = &ast.UnaryLenOpExpr{Expr: $2}
            $$.SetLine($2.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        }

string: 
        TString {
            $$ = &ast.StringExpr{Value: $1.Str}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun: a long string's last line */
        } 

prefixexp:
        var {
            $$ = $1
        } |
        afunctioncall {
            $$ = $1
        } |
        functioncall {
            $$ = $1
        } |
        '(' expr ')' {
            if ex, ok := $2.(*ast.Comma3Expr); ok {
                ex.AdjustRet = true
            }
            $$ = $2
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        }

afunctioncall:
        '(' functioncall ')' {
            $2.(*ast.FuncCallExpr).AdjustRet = true
            $$ = $2
        }

functioncall:
        prefixexp args {
            $$ = &ast.FuncCallExpr{Func: $1, Args: $2}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        prefixexp ':' TIdent args {
            $$ = &ast.FuncCallExpr{Method: $3.Str, Receiver: $1, Args: $4}
            $$.SetLine($1.Line())
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        }

args:
        '(' ')' {
            if $1.NewLine { /* luarun: 5.1's check, whatever the token before the '(' */
               yylex.(*Lexer).TokenError($1, "ambiguous syntax (function call x new statement)")
            }
            $$ = []ast.Expr{}
        } |
        '(' exprlist ')' {
            if $1.NewLine { /* luarun: 5.1's check, whatever the token before the '(' */
               yylex.(*Lexer).TokenError($1, "ambiguous syntax (function call x new statement)")
            }
            $$ = $2
        } |
        tableconstructor {
            $$ = []ast.Expr{$1}
        } | 
        string {
            $$ = []ast.Expr{$1}
        }

function:
        TFunction funcbody {
            $$ = &ast.FunctionExpr{ParList:$2.ParList, Stmts: $2.Stmts}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($2.LastLine())
        }

/* luarun: the function's scope opens at its '(' and closes at its end */
funcbody:
        funcopen parlist ')' block TEnd {
            yylex.(*Lexer).closeFunc()
            $$ = &ast.FunctionExpr{ParList: $2, Stmts: $4}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($5.Pos.Line)
        } | 
        funcopen ')' block TEnd {
            yylex.(*Lexer).closeFunc()
            $$ = &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: false, Names: []string{}}, Stmts: $3}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine($4.Pos.Line)
        }

funcopen:
        '(' {
            yylex.(*Lexer).openFunc($1.Pos.Line)
            $$ = $1
        }

/* luarun: parameters are active as they are declared (nothing in a
   parameter list names them); '...' declares arg, as 5.1's
   LUA_COMPAT_VARARG */
parlist:
        T3Comma {
            yylex.(*Lexer).declare("arg", yyrcvr.char)
            yylex.(*Lexer).activate()
            $$ = &ast.ParList{HasVargs: true, Names: []string{}}
        } | 
        parnames {
          $$ = &ast.ParList{HasVargs: false, Names: []string{}}
          $$.Names = append($$.Names, $1...)
        } | 
        parnames ',' T3Comma {
          yylex.(*Lexer).declare("arg", yyrcvr.char)
          yylex.(*Lexer).activate()
          $$ = &ast.ParList{HasVargs: true, Names: []string{}}
          $$.Names = append($$.Names, $1...)
        }

parnames:
        TIdent {
            yylex.(*Lexer).declare($1.Str, yyrcvr.char)
            yylex.(*Lexer).activate()
            $$ = []string{$1.Str}
        } | 
        parnames ','  TIdent {
            yylex.(*Lexer).declare($3.Str, yyrcvr.char)
            yylex.(*Lexer).activate()
            $$ = append($1, $3.Str)
        }

tableconstructor:
        '{' '}' {
            $$ = &ast.TableExpr{Fields: []*ast.Field{}}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        } |
        '{' fieldlist '}' {
            $$ = &ast.TableExpr{Fields: $2}
            $$.SetLine($1.Pos.Line)
            $$.SetLastLine(endLine(yylex, yyrcvr.char)) /* luarun */
        }


fieldlist:
        field {
            $$ = []*ast.Field{$1}
        } | 
        fieldlist fieldsep field {
            $$ = append($1, $3)
        } | 
        fieldlist fieldsep {
            $$ = $1
        }

field:
        TIdent '=' expr {
            $$ = &ast.Field{Key: &ast.StringExpr{Value:$1.Str}, Value: $3}
            $$.Key.SetLine($1.Pos.Line)
        } | 
        '[' expr ']' '=' expr {
            $$ = &ast.Field{Key: $2, Value: $5}
        } |
        expr {
            $$ = &ast.Field{Value: $1}
        }

fieldsep:
        ',' {
            $$ = ","
        } | 
        ';' {
            $$ = ";"
        }

%%

// blockEnd is the line of a block's last token: its last statement's, or
// open's (the line of the token before the block) when it is empty
// (luarun).
// endLine is the line of the last token a rule consumed, the parser's
// lookahead char telling whether it read one more (luarun).
func endLine(yylex yyLexer, char int) int {
	return yylex.(*Lexer).EndLine(char >= 0)
}

func blockEnd(stmts []ast.Stmt, open int) int {
	if len(stmts) == 0 {
		return open
	}
	return stmts[len(stmts)-1].LastLine()
}

func TokenName(c int) string {
	if c >= TAnd && c-TAnd < len(yyToknames) {
		if yyToknames[c-TAnd] != "" {
			return yyToknames[c-TAnd]
		}
	}
    return string([]byte{byte(c)})
}

