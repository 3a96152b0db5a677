return { proto = { "TEXT" }, eval = function(args, ctx) return ctx:lookup(args[1]) end }
