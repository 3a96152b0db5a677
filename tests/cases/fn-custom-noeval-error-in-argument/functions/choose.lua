return {
  proto = { "BOOL", "NOEVAL", "NOEVAL" },
  eval = function(args)
    if args[1] then return args[2]:eval() end
    return args[3]:eval()
  end,
}
