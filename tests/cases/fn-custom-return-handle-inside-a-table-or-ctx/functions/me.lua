return { proto = {}, eval = function(args, ctx) return ctx end }
