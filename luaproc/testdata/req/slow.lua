-- blocks while it loads
req_slow_loads = (req_slow_loads or 0) + 1
time.sleep(0.02)
local ok = pcall(time.sleep, 0.001) -- and inside pcall
return {ok = ok, loads = req_slow_loads}
