return { proto = { "TEXT" }, eval = function() return 1 end }
