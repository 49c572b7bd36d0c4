return "sub of " .. (...)
