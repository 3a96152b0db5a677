return { proto = {}, eval = function() return "second" end }
