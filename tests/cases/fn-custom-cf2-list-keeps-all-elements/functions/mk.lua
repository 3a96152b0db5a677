-- a list built with holes / extra keys must not silently lose elements
return { proto = {}, eval = function() local t = cf2.list(); t[1] = "a"; t[3] = "c"; return t end }
