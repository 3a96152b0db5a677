return { proto = {}, eval = function() return "first" end }
