package lua

// limits51_test.go: Lua 5.1's parser checks its limits as it reads a
// chunk (lua/parse/scope.go): the 201st active local and the 61st upvalue
// of a function are errors at the token 5.1 is on then, even in a chunk
// with a syntax error further on.

import "testing"

// TestLimitsWhileParsingAs51: errors.lua's two cases (a function left
// open), the line of the error (the end of the token after the name one
// too many: on a later line, a comment or a long string between), a
// lexical error in that token first, the locals 5.1 declares (a for
// loop's control variables, self, a vararg function's arg) and the
// scopes that decide what a name is (a local statement's names are not
// active in its explist, a local function's are in its body, a repeat's
// block's in its condition; a block's go out of scope; the upvalues a
// function takes for one nested in it, and the line each function is
// defined on). The lines and the precedence over a later syntax error
// failed before: the compiler, which saw the limits after the parse,
// gave the statement's line, and a syntax error anywhere came first.
func TestLimitsWhileParsingAs51(t *testing.T) {
	checkLua51(t, `local function try(s) local f, e = loadstring(s) print(f ~= nil, e) end
local function names(p, n) local t = {} for i = 1, n do t[i] = p .. i end return table.concat(t, ", ") end
-- errors.lua: 70 upvalues in functions nested in one never closed
local s = "function foo ()\n  local " .. names("a", 70) .. ", b\n"
for j = 1, 70 do s = s .. "function foo" .. j .. " ()\n a" .. j .. "=3\n" end
try(s)
-- errors.lua: 300 locals in a function never closed
try("\nfunction foo ()\n  local " .. names("a", 300) .. ", b\n")
-- the line is the one of the token after the name that is one too many
try("local " .. names("a", 199) .. ",\n\nb,\n\nc\n\n")
try("local " .. names("a", 199) .. ",\n\nb,\n\nc\n\n-- x\n")
try("local " .. names("a", 199) .. ",\n\nb,\n\nc\n\n[[\n\n]]")
try("x = 1\nlocal " .. names("a", 201) .. "\n)")
-- a lexical error in that token comes first, as 5.1 has read it
local f, e = loadstring("local " .. names("a", 201) .. " [[unfinished\n")
print(f, e:match(":(%d+):"), e:find("local variables"))
-- a for loop's three control variables count
try("local " .. names("a", 196) .. "\nfor i = 1, 2 do end")
try("local " .. names("a", 197) .. "\nfor i in 1 do end end")
try("local " .. names("a", 195) .. "\nfor i \n= 1, 2 do end")
try("local " .. names("a", 195) .. "\nfor i, \nj in 1 do end")
-- self and a vararg function's arg are locals
try("function t:f(" .. names("a", 199) .. ") end")
try("function t:f(" .. names("a", 200) .. ") end end")
try("function f(" .. names("a", 199) .. ", ...) end")
try("function f(" .. names("a", 200) .. ", ...) end")
try("function f(" .. names("a", 200) .. ", \n...) end")
-- a local statement's locals are not active in its explist
try("local " .. names("a", 60) .. "\nlocal b = function() return " .. names("a", 60):gsub(",", " +") .. " + b end")
try("local " .. names("a", 60) .. "\nlocal function b() return " .. names("a", 60):gsub(",", " +") .. " + b end")
-- a repeat's locals are active in its condition
try("local " .. names("a", 59) .. "\nrepeat local b until function() return " .. names("a", 59):gsub(",", " +") .. " + b end")
try("local " .. names("a", 59) .. "\nrepeat local b until 1 x = function() return " .. names("a", 59):gsub(",", " +") .. " + b end")
-- a block's locals go out of scope, a function's are its own
try("do local " .. names("a", 150) .. " end do local " .. names("a", 150) .. " end")
try("local " .. names("a", 150) .. "\nlocal f = function() local " .. names("b", 199) .. " end local " .. names("c", 50) .. "\n}")
try("local " .. names("a", 150) .. "\nlocal f = function()\n local " .. names("b", 201) .. " end")
-- the upvalues a function takes for one nested in it
try("local " .. names("a", 61) .. "\nfunction g()\nlocal x\n return function() return " .. names("a", 61):gsub(",", " +") .. " end end")
try("local " .. names("a", 61) .. "\nlocal g = \nfunction\n(x) return function() return " .. names("a", 61):gsub(",", " +") .. " end end")
try("local " .. names("a", 61) .. "\nlocal function\n g\n(x) return " .. names("a", 61):gsub(",", " +") .. " end")
try("local " .. names("a", 61) .. "\nfunction t.u:v(x)\n return " .. names("a", 61):gsub(",", " +") .. " end")
try("local " .. names("a", 60) .. "\nfunction f(x)\n return " .. names("a", 60):gsub(",", " +") .. ", a1, a60 end")
`, `false	[string "function foo ()..."]:124: function at line 3 has more than 60 upvalues
false	[string "..."]:3: function at line 2 has more than 200 local variables
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:7: main function has more than 200 local variables
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:8: main function has more than 200 local variables
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:9: main function has more than 200 local variables
false	[string "x = 1..."]:3: main function has more than 200 local variables
nil	2	nil
true	nil
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:2: main function has more than 200 local variables
true	nil
true	nil
true	nil
false	[string "function t:f(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12,..."]:1: function at line 1 has more than 200 local variables
true	nil
false	[string "function f(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a..."]:1: function at line 1 has more than 200 local variables
false	[string "function f(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a..."]:2: function at line 1 has more than 200 local variables
true	nil
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:2: function at line 2 has more than 60 upvalues
true	nil
true	nil
true	nil
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:3: main function has more than 200 local variables
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:3: function at line 2 has more than 200 local variables
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:4: function at line 2 has more than 60 upvalues
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:4: function at line 4 has more than 60 upvalues
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:4: function at line 4 has more than 60 upvalues
false	[string "local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a..."]:3: function at line 2 has more than 60 upvalues
true	nil
`)
}
