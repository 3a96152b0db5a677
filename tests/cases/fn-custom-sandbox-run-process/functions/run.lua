return { proto = { "TEXT" }, eval = function(args) return os.execute(args[1]) end }
