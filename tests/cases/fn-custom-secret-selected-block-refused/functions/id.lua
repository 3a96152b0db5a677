return { proto = { "BLOCK" }, eval = function(args) return args[1] end }
