return { proto = {}, eval = function() return { ["two words"] = 1 } end }
