return { proto = { "LIST" }, eval = function() return "module" end }
