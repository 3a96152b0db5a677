return { proto = { "TEXT" }, eval = function(args) return cf2.string(args[1]) end }
