return { proto = { "BLOCK" }, eval = function(args, ctx) local n = 0 for _ in pairs(args[1]) do n = n + 1 end return n end }
