return { proto = {}, eval = function() local i = (string.rep("a", 10000)):find(".-.-.-.-b") return i end }
