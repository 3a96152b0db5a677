return {
  proto = { "NUMBER|UNDEF" },
  eval = function(args) if args[1] == nil then return "none" end return args[1] end,
}
