return { proto = {}, eval = function() return cf2.list({ 1, 2, extra = 3 }) end }
