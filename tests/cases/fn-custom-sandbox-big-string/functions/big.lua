return { proto = {}, eval = function() return string.rep("x", 1e9) end }
