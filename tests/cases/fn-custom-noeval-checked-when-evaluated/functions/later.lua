return { proto = { "NUMBER|NOEVAL" }, eval = function(args) return args[1]:eval() end }
