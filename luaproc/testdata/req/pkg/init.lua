-- a package: require("req.pkg") finds req/pkg/init.lua
return {name = ..., sub = require("req.pkg.sub")}
