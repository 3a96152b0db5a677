-- Reference §6.1: "The result value may be a Perl scalar, list or hash, or an AST node."
return { proto = { "ANYTYPE|NOEVAL" }, eval = function(args) return args[1] end }
