return { proto = {}, eval = function() return "environment" end }
