return { proto = { "INTEGER" }, eval = function() return 1 end }
