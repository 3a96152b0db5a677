return { proto = { "ANYTYPE" }, eval = function(args) return 1 end }
