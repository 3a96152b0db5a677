return { proto = { "ANYTYPE" }, eval = function(args) return args[1] end }
