return { proto = { "TEXT" }, eval = function(args) return args[1] end }
