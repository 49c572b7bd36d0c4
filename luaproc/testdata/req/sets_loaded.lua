package.loaded[...] = "set by the module"
