-- a syntax error on line 3
local x = 1
local = 2
