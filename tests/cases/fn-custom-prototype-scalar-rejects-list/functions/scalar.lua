return { proto = { "SCALAR" }, eval = function(args) return 1 end }
