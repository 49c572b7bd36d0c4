req_fails_loads = (req_fails_loads or 0) + 1
if req_fails_loads == 1 then error("first load fails") end
return "loaded on try " .. req_fails_loads
