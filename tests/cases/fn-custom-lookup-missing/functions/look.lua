return { proto = {}, eval = function(args, ctx) return ctx:lookup("Servr") end }
