-- markdown.lua (Debian lua-markdown) over every docN.md in the current directory: the HTML and a checksum of each
local markdown = require "markdown"
local n = 0
for i = 1, 1000 do
  local f = io.open("doc" .. i .. ".md")
  if not f then break end
  local s = f:read("*a") f:close()
  local html = markdown(s)
  local sum = 0
  for j = 1, #html do sum = (sum * 31 + html:byte(j)) % 2147483647 end
  print("== doc" .. i, #s, #html, sum)
  io.write(html, "\n")
  n = n + 1
end
print("converted", n)
