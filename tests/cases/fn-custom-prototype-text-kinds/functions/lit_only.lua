return { proto = { "LITERAL" }, eval = function(args) return args[1] end }
