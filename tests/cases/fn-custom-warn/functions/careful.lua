return { proto = { "NUMBER" }, eval = function(args, ctx) ctx:warn("value " .. args[1] .. " looks odd") return args[1] end }
