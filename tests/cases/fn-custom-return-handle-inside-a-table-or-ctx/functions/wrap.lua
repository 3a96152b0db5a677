return { proto = { "ANYTYPE|NOEVAL" }, eval = function(args) return { x = args[1] } end }
