return { proto = { "NOEVAL" }, eval = function(args, ctx) return args[1]:eval().a end }
