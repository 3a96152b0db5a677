return { proto = {}, eval = function() return nil end }
