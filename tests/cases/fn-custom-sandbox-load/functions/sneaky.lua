return { proto = {}, eval = function() return load("return 1")() end }
