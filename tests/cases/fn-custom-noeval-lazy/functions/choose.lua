return {
  proto = { "BOOL", "ANYTYPE|UNDEF|NOEVAL", "ANYTYPE|UNDEF|NOEVAL" },
  eval = function(args)
    if args[1] then return args[2]:eval() end
    return args[3]:eval()
  end,
}
