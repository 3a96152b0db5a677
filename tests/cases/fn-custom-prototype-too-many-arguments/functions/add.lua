return {
  proto = { "NUMBER", "NUMBER" },
  eval = function(args, ctx)
    return args[1] + args[2]
  end,
}
