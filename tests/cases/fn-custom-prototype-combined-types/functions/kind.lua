return { proto = { "NUMBER|LIST|STRING" }, eval = function(args) return args.types[1] end }
