-- Proto (ANYTYPE|NOEVAL, BOOL): the first argument is passed unevaluated; a boolean result.
return {
  proto = { "ANYTYPE|NOEVAL", "BOOL" },
  eval = function(args, ctx)
    if args[2] then
      return args[1]:eval() ~= nil
    end
    return false
  end,
}
