return { proto = {}, eval = function() return { users = { 1, name = "x" } } end }
