local a = require("req.cycle_a")
return "b"
