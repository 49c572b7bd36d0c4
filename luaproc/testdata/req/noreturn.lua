req_noreturn_ran = true
