return { proto = {}, eval = function() return { ["a\u{A0}b"] = 1 } end }
