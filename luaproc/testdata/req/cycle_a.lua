require("req.cycle_b")
return "a"
