return { proto = {}, eval = function() return "option" end }
