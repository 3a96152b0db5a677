return { proto = {}, eval = function() local n = math.random(6) return n end }
